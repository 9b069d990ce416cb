"""What runs programs and games as OS processes: the Old Maid scenarios and their verifier
(``oldmaid``), ``ring check`` (``check``), ``ring tournament`` (``tournament``), the box every
program of ours runs in (``sandbox``), and the benches (``bench``)."""
