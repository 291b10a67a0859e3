"""The differential verifier: the read-only prover against what the shell and the programs really do (issue 35).

Lines generated over the allowlist (:mod:`.generator`) are proven by guard (:mod:`.claims`); each proven line runs
in a bubblewrap sandbox under strace (:mod:`.sandbox`, :mod:`.driver`), and :mod:`.oracle` reports what it did
that its proof rules out. Escapes are minimised (:mod:`.minimise`) and kept in a corpus (:mod:`.corpus`) that every
CI run replays. Test infrastructure: nothing here ships in the package.
"""
