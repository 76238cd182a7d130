"""Tables, figures and the HTML report built from per-dialogue scores.

Entry points for workflow rules (all take frames/records in and write files out):

* :func:`lecode.report.outputs.write_tables` - Tables 2, 3, 6, 7, paired differences, the
  comparison with the paper, usage per role (Markdown, CSV, LaTeX and each table's provenance
  document, :mod:`lecode.report.document`) and metrics JSON;
* :func:`lecode.report.figures.write_figures` - Figures 3, 5, 6, 7 and recall by turn (PNG, PDF)
  plus their data for ``dvc plots``;
* :func:`lecode.report.html.write_html` - one self-contained ``index.html`` showing the written
  tables from their documents.

Statistics live in :mod:`lecode.stats`.
"""
