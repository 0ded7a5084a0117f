import json
import re
import subprocess
from html.parser import HTMLParser

import pytest

from graphmatch.viz.graph_html import html_document, write_html
from graphmatch.viz.layout import edge_name

VOID = {"meta", "link", "br", "img", "input", "hr", "col", "source", "wbr", "area", "base", "embed"}


class _Collector(HTMLParser):
    """Checks that tags nest and close, and collects text, attributes and scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.scripts: dict[str, str] = {}
        self._script: str | None = None

    def handle_starttag(self, tag, attrs):
        self.attrs.extend((tag, k, v) for k, v in attrs)
        if tag == "script":
            self._script = dict(attrs).get("id", f"inline{len(self.scripts)}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.attrs.extend((tag, k, v) for k, v in attrs)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self.scripts[self._script] = self.scripts.get(self._script, "") + data
        else:
            self.text.append(data)


def _parse(document: str) -> _Collector:
    parser = _Collector()
    parser.feed(document)
    parser.close()
    assert parser.errors == [] and parser.stack == [], (parser.errors, parser.stack)
    return parser


def test_html_is_self_contained_and_parses(lattice, tmp_path):
    path = write_html(lattice, tmp_path / "out" / "g.html", title="LET <lattice>")
    document = path.read_text(encoding="utf-8")
    assert document.startswith("<!DOCTYPE html>")
    parsed = _parse(document)
    assert "http://" not in document and "https://" not in document and "//cdn" not in document
    assert not [a for a in parsed.attrs if a[1] in ("src", "href", "xlink:href")]
    assert "<link" not in document and "@import" not in document
    assert "LET <lattice>" in "".join(parsed.text)  # the title is escaped, not markup
    nodes = json.loads(parsed.scripts["graph-nodes"])
    assert len(nodes) == sum(int(lattice[t].num_nodes) for t in lattice.node_types)


def test_html_contains_every_node_label_and_attributes(lattice, tree):
    for data in (lattice, tree):
        parsed = _parse(html_document(data))
        text = parsed.text
        for node_type in data.node_types:
            for label in data[node_type].text:
                assert label in text, f"{node_type} label {label!r} missing"
    nodes = json.loads(_parse(html_document(tree)).scripts["graph-nodes"])
    assert nodes["token:7"] == {
        "type": "token",
        "index": 7,
        "label": "首",
        "attrs": {"branch": "True", "input_ids": "107", "pos": "5"},
    }
    nodes = json.loads(_parse(html_document(lattice)).scripts["graph-nodes"])
    assert nodes["word:4"]["attrs"]["span"] == "[4, 7]"
    assert nodes["sememe:0"]["attrs"]["vec"] == "float32 vector of shape [20]"


def test_html_labels_are_escaped(tree):
    tree["token"].text = ["<s>", "a&b", *tree["token"].text[2:]]
    document = html_document(tree)
    parsed = _parse(document)
    assert "<s>" in parsed.text and "a&b" in parsed.text
    assert "&lt;s&gt;" in document and "<s>" not in document.split("<script")[0]


def test_html_unlabelled_nodes_and_edges(unlabelled):
    document = html_document(unlabelled)
    parsed = _parse(document)
    assert "token:0" in parsed.text and "sememe:5" in parsed.text
    paths = [v for t, k, v in parsed.attrs if t == "path" and k == "data-type"]
    expected = sum(int(unlabelled[et].edge_index.size(1)) for et in unlabelled.edge_types) - 3  # self-loops
    assert len(paths) == expected
    for et in unlabelled.edge_types:
        assert edge_name(et) in paths


def test_hidden_edge_types_start_hidden(lattice):
    closure = ("word", "reach_fwd", "word")
    parsed = _parse(html_document(lattice, hidden_edge_types=[closure]))
    classes = {v for t, k, v in parsed.attrs if t == "path" and k == "class" and v.startswith("edge")}
    assert classes == {"edge", "edge hidden"}
    hidden = json.loads(parsed.scripts["graph-edges"])["hidden"]
    assert hidden == [edge_name(closure)]
    with pytest.raises(ValueError, match="not in the graph"):
        html_document(lattice, hidden_edge_types=[("word", "nope", "word")])


def test_inline_script_is_valid_javascript(lattice, tmp_path, node):
    document = html_document(lattice)
    code = [s for k, s in _parse(document).scripts.items() if k.startswith("inline")]
    assert len(code) == 1 and re.search(r"addEventListener\(\"click\"", code[0])
    script = tmp_path / "page.js"
    script.write_text(code[0], encoding="utf-8")
    result = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


_FAKE_DOM = r"""
const spec = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
class El {
  constructor(attrs) { this.attrs = attrs; this.listeners = {}; this.style = {}; this.textContent = ""; }
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  get classes() { return (this.attrs["class"] || "").split(" ").filter(Boolean); }
  get classList() {
    const el = this;
    const set = (c, on) => {
      const cs = el.classes.filter((x) => x !== c);
      if (on) { cs.push(c); }
      el.attrs["class"] = cs.join(" ");
    };
    return { toggle: (c, on) => set(c, on === undefined ? !el.classes.includes(c) : on),
             remove: (...cs) => cs.forEach((c) => set(c, false)) };
  }
  addEventListener(t, f) { (this.listeners[t] = this.listeners[t] || []).push(f); }
  fire(t, ev) { (this.listeners[t] || []).forEach((f) => f(Object.assign({ stopPropagation() {} }, ev))); }
  getBoundingClientRect() { return { left: 0, top: 0, width: 100, height: 100 }; }
}
const all = spec.elements.map((a) => new El(a));
function matches(el, sel) {
  const m = sel.trim().match(/^\.([\w-]+)(?:\[([\w-]+)="(.*)"\])?$/);
  return el.classes.includes(m[1]) && (!m[2] || el.getAttribute(m[2]) === m[3]);
}
function query(sel) { return all.filter((el) => sel.split(",").some((s) => matches(el, s))); }
const svg = new El({ viewBox: spec.viewBox });
svg.querySelectorAll = query;
const byId = { "graph": svg, "tip": new El({}),
               "graph-nodes": { textContent: spec.nodes }, "graph-edges": { textContent: spec.edges } };
global.document = { getElementById: (id) => byId[id], querySelectorAll: query };
global.window = new El({});
eval(spec.script);
const node = (k) => all.find((el) => el.getAttribute("data-key") === k);
node(spec.hover).fire("mousemove", { clientX: 5, clientY: 5 });
const tip = byId["tip"].textContent;
node(spec.click).fire("click", {});
const afterClick = all.map((el) => el.attrs);
all.find((el) => el.classes.includes("edge-item")).fire("click", {});
console.log(JSON.stringify({ tip, afterClick, afterToggle: all.map((el) => el.attrs) }));
"""


def test_script_hover_click_and_legend_in_a_fake_dom(tree, tmp_path, node):
    document = html_document(tree)
    parsed = _parse(document)
    elements = [a for _, a in _elements(document) if a.get("class", "").split()[:1] in (["node"], ["edge"], ["item"])]
    spec = {
        "elements": elements,
        "viewBox": re.search(r'id="graph" viewBox="([^"]+)"', document).group(1),
        "nodes": parsed.scripts["graph-nodes"],
        "edges": parsed.scripts["graph-edges"],
        "script": next(s for k, s in parsed.scripts.items() if k.startswith("inline")),
        "hover": "token:7",
        "click": "word:0",
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "dom.js").write_text(_FAKE_DOM, encoding="utf-8")
    result = subprocess.run(
        [node, str(tmp_path / "dom.js"), str(tmp_path / "spec.json")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["tip"].splitlines()[0] == "token 7: 首" and "pos = 5" in out["tip"] and "branch = True" in out["tip"]
    classes = {a.get("data-key"): a["class"] for a in out["afterClick"] if "data-key" in a}
    # word 0 (北京): itself, its tokens 北 京 (3, 4) and its entities 义原, 首都 (0, 1) stay lit
    lit = {k for k, c in classes.items() if "dim" not in c.split()}
    assert lit == {"word:0", "token:3", "token:4", "entity:0", "entity:1"}
    assert "picked" in classes["word:0"].split()
    edges = [a for a in out["afterClick"] if a["class"].startswith("edge")]
    incident = [a for a in edges if "word:0" in (a["data-src"], a["data-dst"])]
    assert incident and all("dim" not in a["class"] for a in incident)
    assert all("dim" in a["class"] for a in edges if a not in incident)
    legend = [a for a in out["afterToggle"] if a["class"].startswith("item edge-item")]
    assert "off" in legend[0]["class"].split()  # the first edge type was switched off
    first_type = legend[0]["data-type"]
    assert all(
        "hidden" in a["class"].split()
        for a in out["afterToggle"]
        if a.get("data-type") == first_type and "data-src" in a
    )


def _elements(document: str) -> list[tuple[str, dict[str, str]]]:
    found: list[tuple[str, dict[str, str]]] = []

    class Elements(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, {k: v or "" for k, v in attrs}))

        handle_startendtag = handle_starttag

    Elements().feed(document)
    return found
