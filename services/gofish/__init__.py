"""Interactive Go Fish (``ring gofish``): pure rules, a sans-IO command session, a terminal loop."""
