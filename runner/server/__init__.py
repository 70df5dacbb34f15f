"""`cardarena serve`: a self-hosted league server that takes bot uploads, checks them, plays them and rates them live.

Everything here sits on top of the tournament machinery, which it reaches only through
`league_play` (so that the calls can move to the run service in one place); the web framework
(Starlette, uvicorn with httptools and uvloop, python-multipart: the `cardarena[serve]` extra) is imported by `app` alone.
"""
