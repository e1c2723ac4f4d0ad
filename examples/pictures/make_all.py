"""Regenerate every picture our seed blog posts contain, into a folder.

    python examples/pictures/make_all.py [OUT_DIR] [--formats svg,png,txt,tex]

OUT_DIR defaults to examples/pictures/out (git-ignored). Each picture is written in every
format asked for (PNG only when Pillow is installed: pip install 'cutelab[png]'), and
index.html shows all the SVGs on one page.
"""

from __future__ import annotations

import argparse
import html
import os
import pathlib
import sys

import cutelab as cute
from cutelab import render as R


def pictures() -> dict:
    """name -> (seed, Figure builder)."""
    P = {}
    # --- hierarchical-layouts: each layout as a grid, by offset and by coordinate, and its index -> coordinate map
    for name, text in [("cube", "(2,2,2):(2,1,4)"), ("matrix_4x2", "((2,2),2):((2,4),1)"),
                       ("matrix_2x4", "(2,(2,2)):(2,(1,4))"), ("matrix_2x4_b", "(2,(2,2)):(1,(4,2))"),
                       ("nested_4x4", "((2,2),(2,2)):((1,8),(2,4))")]:
        P[f"hier_{name}"] = ("hierarchical-layouts", lambda t=text: R.layout_figure(t))
        P[f"hier_{name}_coord"] = ("hierarchical-layouts", lambda t=text: R.layout_figure(t, label="coord"))
        P[f"hier_{name}_table"] = ("hierarchical-layouts", lambda t=text: R.coords_figure(t))
    # --- thread-value-layouts
    tv = "((2,2),(2,3)):((2,12),(1,4))"
    P["tv_value_layout"] = ("thread-value-layouts", lambda: R.layout_figure("(2,3):(1,4)", title="value layout of thread 0: (2,3):(1,4)"))
    P["tv_thread_layout"] = ("thread-value-layouts", lambda: R.layout_figure("(2,2):(2,12)", title="thread layout: (2,2):(2,12)"))
    P["tv_seed_row"] = ("thread-value-layouts", lambda: R.tv_figure(tv, (1, 24), title=f"TV layout {tv} over 24 elements"))
    P["tv_seed_column"] = ("thread-value-layouts", lambda: R.tv_figure(tv, (24, 1), title=f"TV layout {tv} over the (24,1) tensor"))
    P["tv_seed_layout"] = ("thread-value-layouts", lambda: R.layout_figure(tv, title=f"{tv}: (thread, value) -> offset"))
    # --- cute-partitions
    P["partition_inner_tiled"] = ("cute-partitions", lambda: R.tiled_partition_figure((16, 64), (1, 16), 16))
    P["partition_outer"] = ("cute-partitions", lambda: R.outer_partition_figure((16, 32), (8, 16), "(4,8):(8,1)"))
    P["partition_outer_seed_block"] = ("cute-partitions", lambda: R.outer_partition_figure((32, 256), (32, 256), "(8,32):(32,1)"))
    P["partition_tv"] = ("cute-partitions", lambda: R.tv_partition_figure((16, 16), "(4,2):(2,1)", "(2,4):(4,1)"))
    P["partition_tv_copy_tile"] = ("cute-partitions", lambda: R.make_tv_figure("(32,8):(8,1)", "(4,8):(8,1)"))
    # --- layout-algebra-zh
    P["zh_layout_left"] = ("layout-algebra-zh", lambda: R.layout_figure("(2,3):(1,2)"))
    P["zh_layout_right"] = ("layout-algebra-zh", lambda: R.layout_figure("(2,3):(3,1)"))
    P["zh_complement_1d"] = ("layout-algebra-zh", lambda: R.explain("complement", "4:2", 8))
    P["zh_complement_2d"] = ("layout-algebra-zh", lambda: R.explain("complement", "(2,3):(2,4)", 24))
    P["zh_composition_tv2memory"] = ("layout-algebra-zh", lambda: R.explain("composition", "(4,4):(4,1)", "(4,2,2):(2,1,8)"))
    P["zh_inverse_layout"] = ("layout-algebra-zh", lambda: R.layout_figure("(2,3):(3,1)"))
    P["zh_inverse_right_inverse"] = ("layout-algebra-zh", lambda: R.layout_figure(
        cute.right_inverse(cute.Layout.parse("(2,3):(3,1)")), title="right_inverse((2,3):(3,1))"))
    P["zh_logical_divide"] = ("layout-algebra-zh", lambda: R.explain("logical_divide", "(8,8)", "<2:1,4:1>"))
    P["zh_zipped_divide"] = ("layout-algebra-zh", lambda: R.explain("zipped_divide", "(8,8)", "(2,4)"))
    P["zh_logical_product"] = ("layout-algebra-zh", lambda: R.explain("logical_product", "(2,5):(5,1)", "(3,4)"))
    P["zh_blocked_product"] = ("layout-algebra-zh", lambda: R.explain("blocked_product", "(2,5):(5,1)", "(3,4)"))
    P["zh_raked_product"] = ("layout-algebra-zh", lambda: R.explain("raked_product", "(2,5):(5,1)", "(3,4)"))
    base = cute.Layout.parse("(4,3):(4,1)")
    x2 = cute.blocked_product(base, cute.make_layout((1, 2)))
    P["zh_product_order_x2_x2"] = ("layout-algebra-zh", lambda: R.layout_figure(
        cute.blocked_product(x2, cute.make_layout((2, 1))), title="blocked_product(blocked_product((4,3):(4,1), (1,2)), (2,1))"))
    P["zh_product_order_x4"] = ("layout-algebra-zh", lambda: R.layout_figure(
        cute.blocked_product(base, cute.make_layout((2, 2))), title="blocked_product((4,3):(4,1), (2,2))"))
    # --- atoms: TiledMMA and TiledCopy as CuTe's print_latex draws them, shared memory by bank
    from cutelab.nvgpu import OperandMajorMode, warp, warpgroup
    from cutelab.nvgpu.warpgroup import SmemLayoutAtomKind, make_smem_layout_atom

    f16, f32 = cute.Float16, cute.Float32
    sm80 = warp.MmaF16BF16Op(f16, f32, (16, 8, 16))
    wgmma = warpgroup.MmaF16BF16Op(f16, f32, (64, 16, 16), warpgroup.OperandSource.RMEM,
                                   OperandMajorMode.K, OperandMajorMode.K)
    ldsm = lambda trans: cute.make_copy_atom(warp.LdMatrix8x8x16bOp(trans, 4), f16)  # noqa: E731
    P["mma_sm80_16x8x16_atom"] = ("tiled-mma", lambda: R.mma_figure(cute.make_tiled_mma(sm80)))
    P["mma_sm80_16x8x16_2x2x1"] = ("tiled-mma", lambda: R.mma_figure(cute.make_tiled_mma(sm80, (2, 2, 1))))
    P["mma_sm90_64x16x16_rs"] = ("tiled-mma", lambda: R.mma_figure(cute.make_tiled_mma(wgmma)))
    P["copy_ldmatrix_x4"] = ("tiled-copy", lambda: R.copy_figure(
        cute.make_tiled_copy_tv(ldsm(False), cute.make_layout((32, 1)), cute.make_layout((1, 8)))))
    P["copy_ldmatrix_x4_trans_for_A"] = ("tiled-copy", lambda: R.copy_figure(
        cute.make_tiled_copy_A(ldsm(True), cute.make_tiled_mma(sm80))))
    P["swizzle_none_8x64_f16"] = ("swizzle", lambda: R.swizzle_figure("(8,64):(64,1)", elem_bits=16))
    P["swizzle_128B_8x64_f16"] = ("swizzle", lambda: R.swizzle_figure("S<3,3,3> o 0 o (8,64):(64,1)", elem_bits=16))
    P["swizzle_atom_K_SW128_f16"] = ("swizzle", lambda: R.swizzle_figure(
        make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, f16), elem_bits=16, ptr_swizzle=True))
    return P


SUFFIX = {"svg": ".svg", "png": ".png", "txt": ".txt", "tex": ".tex", "html": ".html"}
FMT = {"svg": "svg", "png": "png", "txt": "text", "tex": "latex", "html": "html"}


def main(argv=None) -> int:
    here = pathlib.Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=str(here / "out"))
    ap.add_argument("--formats", default="svg,png,txt,tex")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    formats = [f for f in args.formats.split(",") if f]
    if "png" in formats:
        try:
            import PIL  # noqa: F401
        except ImportError:
            print("note: Pillow not installed, skipping PNG (pip install 'cutelab[png]')", file=sys.stderr)
            formats.remove("png")
    index = []
    for name, (seed, build) in pictures().items():
        fig = build()
        for f in formats:
            data = R.render(fig, FMT[f])
            path = out / (name + SUFFIX[f])
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                path.write_text(data, encoding="utf-8")
        index.append((seed, name, fig.title))
        print(f"{seed:22s} {name}")
    rows = "\n".join(f"<h2>{html.escape(seed)}: {html.escape(name)}</h2>\n<p>{html.escape(title)}</p>\n"
                     f"<img src=\"{name}.svg\" alt=\"{html.escape(title)}\">" for seed, name, title in index)
    if "svg" in formats:
        (out / "index.html").write_text(f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cutelab seed pictures"
                                        f"</title></head><body>\n{rows}\n</body></html>\n", encoding="utf-8")
    print(f"{len(index)} pictures in {os.fspath(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
