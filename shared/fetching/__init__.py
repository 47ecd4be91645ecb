"""Fetching a capture target safely: connect to the checked address, bounded decoding,
content sniffing, the stall/size rules of one HTTP exchange, and its WARC record."""
