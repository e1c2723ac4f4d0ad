"""Pictures of layouts: grids of offsets, TV layouts, partitions and algebra steps.

Builders (figure.py, partition.py, explain.py) turn layouts into a format-free ``Figure``;
back ends turn a Figure into text (text.py), SVG (svg.py), TikZ/LaTeX (latex.py), HTML
(html.py) or PNG (png.py, needs Pillow: ``pip install 'cutelab[png]'``). ``render`` and
``save`` pick the back end by name or file suffix.
"""
