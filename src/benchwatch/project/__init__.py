"""The project as loaded: its apps, stacks and variants, and the `-k` selection over them."""
