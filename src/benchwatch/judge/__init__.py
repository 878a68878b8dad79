"""Judging base against head: paired ratios and their intervals, noise floors, the verdict per
figure, the gate and its confirmation; compare.json's models."""
