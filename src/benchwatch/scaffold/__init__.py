"""`benchwatch init`: declarations, golden bodies and caller workflows for a user's repository."""
