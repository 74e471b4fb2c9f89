"""``arena serve``: the course server (docs/server.md). :mod:`arena.server.app` (the web side: the application,
assembled from :mod:`~arena.server.public_pages`, :mod:`~arena.server.student_pages`,
:mod:`~arena.server.organiser_pages`, :mod:`~arena.server.api` and :mod:`~arena.server.scrimmage_pages`),
:mod:`arena.server.ladder` (the league that keeps running), :mod:`arena.server.uploads` (uploads read safely),
:mod:`arena.server.auth` (tokens, sessions, CSRF, login limits), :mod:`arena.server.viewers` and
:mod:`arena.server.guards` (who is asking, who may ask)."""
