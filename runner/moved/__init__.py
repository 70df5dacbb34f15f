"""Import names cardarena no longer uses, kept only to say where they went (see `protocol`)."""
