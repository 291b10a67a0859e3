"""The eval suite: score guard's verdicts on labeled datasets, compare models, gate CI.

Nothing here is on the ``guard hook`` path; pandas, matplotlib and vcrpy load only
inside the functions that use them. Modules, from the inside out:

``stats`` (Wilson, exact McNemar, kappa, bootstrap, calibration) → ``scoring`` (what
counts as right) → ``metrics`` (per model and depth, pandas) → ``compare`` (model
against model, run against baseline) → ``gates``; ``cases`` (what the judge sees) →
``runner`` (scheduling through the engine, resume) with ``limiter``, ``progress``,
``recording`` (cassettes) and ``verdicts`` (Decision → row); ``tables``,
``report_md``, ``report_html``, ``plots``, ``junit`` and ``outputs`` write the files;
``session`` runs it all (``guard eval`` and the ``guard_eval`` pytest fixture).
"""
