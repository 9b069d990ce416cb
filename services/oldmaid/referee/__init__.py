"""The Old Maid rules as the table referees them: pure state, no I/O, no clock (``rules``),
with what it checks of claims (``scrutiny``) and of reports and accusations (``reports``,
``accusations``)."""
