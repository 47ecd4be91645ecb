"""Small real PDF files for tests: pages of text lines and a document information dictionary
(written by hand: the project reads PDFs, it never writes them)."""

from __future__ import annotations


def _literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_document(pages: list[list[str]], info: dict[str, str] | None = None) -> bytes:
    """A PDF whose pages show these lines in Helvetica; info as /Title, /Author, ..."""
    objects: list[bytes] = []
    n = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    font = 3 + 2 * n
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 740 Td"]
        ops += [f"({_literal(line)}) Tj T*" for line in lines]
        stream = "\n".join([*ops, "ET"]).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R"
            f" /Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    trailer_info = ""
    if info:
        fields = " ".join(f"/{k} ({_literal(v)})" for k, v in info.items())
        objects.append(f"<< {fields} >>".encode("latin-1"))
        trailer_info = f" /Info {len(objects)} 0 R"
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{trailer_info} >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return out
