"""The experiments harness: capped child processes, CSV results, plots, RESULTS.md."""
