"""A deliberately broken prover, to show the verifier catches what a broken prover lets through."""

from __future__ import annotations

from guard.protection.readonly import Proof

__all__ = ["BrokenClaims"]


class BrokenClaims:
    """Proves every line in ``proven`` (as only reading, or, given a tuple, as writing only those files and making the
    folders ``made`` gives it), or every line when ``proven`` is None; self-protection and the lane allow all it proves."""

    def __init__(
        self, proven: dict[str, tuple[str, ...] | None] | None = None, made: dict[str, tuple[str, ...]] | None = None
    ) -> None:
        self.proven, self.made = proven, made or {}

    def proof(self, line: str, *, writes: bool) -> Proof:
        if self.proven is not None and line not in self.proven:
            return Proof(False, "not in the broken prover's list")
        written = self.proven.get(line) if self.proven is not None else None
        if written is None:
            return Proof(not writes, "the broken prover says it only reads")
        return Proof(writes, "the broken prover says it writes only its targets", written, made=self.made.get(line, ()))

    def protect_allows(self, line: str) -> bool:
        return True

    def lane_allows(self, line: str, *, writes: bool = False) -> bool:
        return True
