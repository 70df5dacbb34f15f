"""Planning a tournament: what is played, decided before any bot starts (league files, schedules, the SPRT)."""
