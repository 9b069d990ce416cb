"""``ring check``: a conformance suite for a student's client, case by case.

Each game's cases (``scenarios.check.reversi``, ...) play the server's side
of the protocol against the student's program over real TCP, one program run
a case, and give a verdict per case: PASS, WARN (legal but fragile) or FAIL
(a rule of docs/protocols broken), each naming the section of
``docs/protocols/GAME.md`` it checks, the way Autobahn|Testsuite and h2spec
name theirs by RFC section. ``runner`` runs them (in parallel, each under a
deadline, the program killed whole at the end of its case), ``report``
writes the summary table, JUnit XML, Gradescope's results.json and JSON.
"""
