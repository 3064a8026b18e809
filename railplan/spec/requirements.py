"""What a buyer requires of a fabric (spec section ``requirements:``), checked by ``recommend``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: the defaults for a training cluster: every pair test at full rate, all-to-all at >= 0.9
DEFAULT_PAIRS_FULL = 1.0
DEFAULT_ALLTOALL = 0.9


class RequirementsSpec(BaseModel):
    """The requirements a recommended design must meet; each is checked on the candidate's own
    wiring, routing and bill (None: not required)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    pairs_full: float = Field(
        DEFAULT_PAIRS_FULL,
        ge=0,
        le=1,
        description="Least share of two-node pair tests at full rate (default 1: every pair)",
    )
    alltoall: float = Field(
        DEFAULT_ALLTOALL,
        ge=0,
        le=1,
        description="Least all-to-all pace: the slowest flow's share of line rate (default 0.9)",
    )
    pd: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Least prefill-to-decode (KV cache) pace, prefill and decode spread over "
        "every leaf group (default 0: not required)",
    )
    worst_failure: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Least all-to-all pace after the worst single switch or link failure",
    )
    grow_to: int | None = Field(
        None,
        ge=1,
        le=4_194_304,
        description="GPUs the design must grow to without recabling any existing link",
    )
    max_power_w: float | None = Field(
        None, gt=0, description="Most fabric power (switches and optics, typical), in W"
    )
    max_hops: int | None = Field(
        None, ge=1, le=16, description="Most switch hops between two NICs of the same rail"
    )
    protocol: Literal["infiniband", "ethernet"] | None = Field(
        None, description="Switch protocol: infiniband or ethernet"
    )
    vendors: list[str] | None = Field(
        None, max_length=64, description="Switch vendors allowed (catalog vendor names)"
    )
    budget_usd: float | None = Field(None, gt=0, description="Most fabric cost, in USD")

    @field_validator("vendors")
    @classmethod
    def _vendors(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and not v:
            raise ValueError("list at least one vendor, or leave it out")
        return v

    def stated(self) -> dict[str, Any]:
        """The requirements in force, by key (unset optional ones left out)."""
        return {k: v for k, v in self.model_dump(mode="json").items() if v is not None}
