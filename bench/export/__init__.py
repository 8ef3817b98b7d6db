"""bench-export: a business's export at scale (issue 56). `calls` measures the calls service's side, ExportPage of a
million calls; the whole export through the archive joins it with the accounts service's export job."""
