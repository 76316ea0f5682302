"""Renderers: report formats of ``check`` (``fluxgraph.render.formats.FORMATS``), graph formats
(``graph_formats``), and the ``diff``/``explain`` reports.

Nothing is imported here, so that importing one renderer does not import them all.
"""
