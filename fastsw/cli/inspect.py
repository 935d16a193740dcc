"""``fastsw inspect``: a summary of a model file, or its merges as JSON."""

from __future__ import annotations

import json

from fastsw.cli import common


def add_parser(sub) -> None:
    p = sub.add_parser(
        "inspect",
        help="describe a model file",
        description="Print a short summary of MODEL, or with --json an object "
        '{"algo", "profile", "vocab_size", "merges": [{"id", "left", "right", "count", "super"}]} '
        "where left/right are the lowercase hex of the merged tokens' bytes, merges in id order.",
    )
    p.add_argument(
        "model_path",
        nargs="?",
        metavar="MODEL",
        default=None,
        help="model file written by 'fastsw train' (or give it as -m MODEL, as every command takes it)",
    )
    p.add_argument("-m", "--model", metavar="MODEL", default=None, help="the model file ('-': read it from stdin)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_inspect)


def cmd_inspect(args) -> int:
    from fastsw.eval.duplication import model_duplication

    if args.model is not None and args.model_path is not None:
        raise common.CliError(f"give the model once: as MODEL ({args.model_path}) or as -m MODEL ({args.model})")
    args.model = args.model if args.model is not None else args.model_path
    if args.model is None:
        raise common.CliError("give the model to inspect: fastsw inspect -m MODEL (or fastsw inspect MODEL)")
    tok = common.load_model(args.model)
    out = common.Output()
    vocab = tok.vocab
    if args.json and tok.algo == "mingram":  # {"algo", "vocab_size", "tokens": [{"id", "hex", "log_prob"}]}
        out.line(json.dumps(tok.inspect_json(), ensure_ascii=False))
        out.flush()
        return common.EXIT_OK
    if args.json:
        data = {
            "algo": tok.algo,
            "profile": tok.profile,
            "vocab_size": tok.vocab_size,
            "merges": [
                {
                    "id": m.id,
                    "left": vocab[m.left].hex(),
                    "right": vocab[m.right].hex(),
                    "count": m.count,
                    "super": m.super,
                }
                for m in tok.merges
            ],
        }
        out.line(json.dumps(data, ensure_ascii=False))
        out.flush()
        return common.EXIT_OK
    info = tok.training_info
    lines = (
        [
            f"model:          {common.STDIN_NAME if args.model == '-' else args.model}",
            f"algo:           {tok.algo}",
            f"profile:        {tok.profile}",
            f"alphabet:       {tok.alphabet.kind} ({len(tok.alphabet)} tokens)",
            f"pretokenizer:   {common.pretokenizer_name(tok.pretokenizer.to_config())}",
        ]
        + ([f"normalize:      {tok.normalize}"] if tok.normalize else [])
        + [
            f"vocab size:     {tok.vocab_size} ({tok.n_regular} regular merges, {tok.n_super} supermerges)",
            "special tokens: "
            + (
                ", ".join(
                    f"{common.render(s.encode('utf-8'))}={i}"
                    for s, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
                )
                or "none"
            ),
        ]
    )
    if "documents" in info:
        lines.append(
            f"trained on:     {common.plural(info['documents'], 'document')}, {info.get('bytes', 0) / 1e6:.2f} MB"
        )
    dup = model_duplication(tok)  # seed 002 Table 5
    lines.append(
        f"duplication:    {100 * dup['space']:.1f} % of entries differ from another only by a leading "
        f"space, {100 * dup['case']:.1f} % only by case"
    )
    if tok.algo == "mingram":
        k = next(i for i, text in enumerate(lines) if text.startswith("vocab size:"))
        lines[k] = f"vocab size:     {tok.vocab_size} (MinGram, score_delta {tok.score_delta})"
        best = sorted(range(tok.vocab_size), key=lambda i: -tok.log_probs[i])[:10]
        lines.append(f"{len(best)} most probable tokens:")
        render = common.render
        if hasattr(tok.alphabet, "atoms"):  # atoms (markers) as ¦ ↑ ⇑
            render = common.atom_renderer(tok.pretokenizer.show)
        lines += [f"  {i:>6}: {render(vocab[i])}  (log_prob {tok.log_probs[i]:.4f})" for i in best]
        for text in lines:
            out.line(text)
        out.flush()
        return common.EXIT_OK
    shown = tok.merges[:10]
    render = common.render
    if hasattr(tok.alphabet, "atoms"):  # atoms (markers) as ¦ ↑ ⇑
        render = common.atom_renderer(tok.pretokenizer.show)
    lines.append(f"first {len(shown)} merges:" if shown else "merges:         none")
    for m in shown:
        kind = "  [super]" if m.super else ""
        lines.append(
            f"  {m.id:>6}: {render(vocab[m.left])} + {render(vocab[m.right])} -> "
            f"{render(vocab[m.id])}  (count {m.count}){kind}"
        )
    for text in lines:
        out.line(text)
    out.flush()
    return common.EXIT_OK
