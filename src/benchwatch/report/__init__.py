"""A run's report (report.md, report.html) and the PR comment (comment.md): tables, charts, SVG, the
colour per stack."""
