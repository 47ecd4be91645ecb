"""The domain policy settings (seed spec §3.3, §11): ARCHIVE_MODE, DELETABLE_ALLOWLIST,
EXCLUDE_DOMAINS.

The writer decides with them whether a link is archived (links in posts and submissions);
the web checks a submission against the same exclusions to answer at once.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from shared.links.policy import DEFAULT_ALLOWLIST, DEFAULT_EXCLUDE, DomainPolicy
from shared.settings import CommonSettings, CsvList, split_csv


class DomainPolicySettings(CommonSettings):
    """ARCHIVE_MODE, DELETABLE_ALLOWLIST and EXCLUDE_DOMAINS."""

    archive_mode: str = Field("deletable", pattern="^(deletable|all)$", description="Policy mode.")
    deletable_allowlist: CsvList = Field(
        default_factory=lambda: list(DEFAULT_ALLOWLIST),
        description="Registrable domains archived in deletable mode.",
    )
    exclude_domains: CsvList = Field(
        default_factory=lambda: list(DEFAULT_EXCLUDE),
        description="Never archived, not even when a person submits them.",
    )

    @field_validator("deletable_allowlist", "exclude_domains", mode="before")
    @classmethod
    def _csv(cls, value: str | list[str]) -> list[str]:
        return split_csv(value)

    def domain_policy(self) -> DomainPolicy:
        """The policy these settings describe."""
        return DomainPolicy(
            mode="all" if self.archive_mode == "all" else "deletable",
            allowlist=frozenset(self.deletable_allowlist),
            exclude=frozenset(self.exclude_domains),
        )
