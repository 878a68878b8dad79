"""The gh-pages site: the overview, every figure's trend, change points, the nightly's status and
the releases page."""
