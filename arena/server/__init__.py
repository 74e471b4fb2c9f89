"""``arena serve``: the course server (docs/server.md). :mod:`arena.server.app` (the web side),
:mod:`arena.server.ladder` (the league that keeps running), :mod:`arena.server.uploads` (uploads read safely),
:mod:`arena.server.auth` (tokens, sessions, CSRF, login limits), :mod:`arena.server.pictures` (inline SVG)."""
