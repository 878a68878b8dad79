"""The figure vocabulary: every metric once (metrics) and the names, labels and keys of figures
(figure_key)."""
