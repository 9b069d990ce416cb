"""``ring tournament``: contests between programs, decided before the first game is played.

``schedule`` says who plays whom, in which seat, with which seed (round
robin, gauntlet, Old Maid rings); ``ratings`` turns the results into a
ranking with intervals (Elo by maximum likelihood for two-player games; the
rate of losing and the mean place for Old Maid rings).
"""
