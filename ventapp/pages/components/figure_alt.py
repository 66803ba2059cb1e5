"""What a figure shows, as its ``alt`` text: a sentence in the page's language, never a file path.

The network solver writes ``<name>-network.png`` (the network coloured by airflow) and
``<name>-<fan>-fan-curve.png`` per fan, or ``<name>-fan-curve.png`` without one (fan and system
curves with the duty points); the model embeds them in
the answer with an alt text of its choosing (``![network](/workspace/results/…)`` was an English
word where a sentence was due). Both the
tool card's figures and the answer's images of those two files get the catalogue's sentence
(``figure.alt_*``); any other image the card shows is named by its file. Screen readers read it,
and a figure that fails to load shows it.
"""

from __future__ import annotations

import reflex as rx
from reflex.vars.base import VarData

from ventapp.pages.components.lang import t

NETWORK_SUFFIX = "-network.png"
CURVES_SUFFIX = "-fan-curve.png"


def figure_alt(path: rx.Var[str]) -> rx.Var[str]:
    """The alt text of the figure at ``path`` (a ``/workspace/…`` path var), in the page's language."""
    name = rx.Var(f"String({path}).split('/').pop()", _var_data=path._get_all_var_data()).to(str)
    return rx.cond(
        path.endswith(NETWORK_SUFFIX),  # type: ignore[attr-defined]
        t("figure.alt_network"),
        rx.cond(
            path.endswith(CURVES_SUFFIX),  # type: ignore[attr-defined]
            t("figure.alt_curves"),
            t("figure.alt_file", name=name),
        ),
    ).to(str)


def with_figure_alts(text: rx.Var[str]) -> rx.Var[str]:
    """The answer's Markdown with the solver's figures' alt texts replaced by :func:`figure_alt`'s sentences.

    ``![anything](/workspace/…-network.png)`` becomes ``![<the network sentence>](…)``, likewise
    for ``-fan-curve.png``; other images and the stored answer are left as they are.
    """
    network, curves = t("figure.alt_network"), t("figure.alt_curves")
    # A replacer function, so nothing in the sentences is read as a "$1" pattern.
    pattern = r"/!\[[^\]\n]*\]\((\/workspace\/[^)\s]*?-(network|fan-curve)\.png)/g"
    js = (
        f"String({text}).replace({pattern}, "
        f"(_m, p, kind) => '![' + (kind === 'network' ? {network} : {curves}) + '](' + p)"
    )
    var_data = VarData.merge(
        text._get_all_var_data(), network._get_all_var_data(), curves._get_all_var_data()
    )
    return rx.Var(js, _var_data=var_data).to(str)
