"""No hand-written NVIDIA method offsets outside the facts (trace-format/facts/).

Every method offset the C sources use comes from the generated class constants (vgt/nv/clXXXX.h). This
test reads the class tables and looks, in the product sources and the GPU self-test, for the two forms a
hand-written offset takes:
  - a named constant (#define NAME 0x..., or NAME = 0x... in an enum) whose name ends with the name of a
    method that some class table puts at that very offset (CE_LAUNCH_DMA = 0x300, NOTIFY_A 0x104u);
  - a hex literal compared with, added to or subtracted from a method address (m->mthd == 0x1b0c,
    mthd - 0x800, method >= 0x1dc), or given as the method of a push-buffer writer call
    (vgt_pbw_inc(pb, subch, 0x240, ...)), when some class defines a method at that offset.
Standard library only; the class tables are read with the generator's own parser.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
FACTS = os.path.join(ROOT, 'trace-format', 'facts')
sys.path.insert(0, FACTS)
import gen_classes  # noqa: E402

SCANNED = ['analyze', 'backend', 'capture', 'replay', 'trace-format', os.path.join('tests', 'gpu')]
HEX = r'0[xX][0-9a-fA-F]+[uUlL]*'
NAMED = re.compile(r'(?:#define\s+([A-Z][A-Z0-9_]*)\s+\(?(' + HEX + r')\)?\s*(?:/[*/].*)?$'
                   r'|\b([A-Z][A-Z0-9_]*)\s*=\s*(' + HEX + r')\s*[,}])')
METHOD_EXPR = re.compile(r'\b(?:mthd|method|m)\s*(?:==|!=|>=|<=|<|>|-|\+)\s*(' + HEX + r')\b'
                         r'|(' + HEX + r')\s*(?:==|!=|<=|>=|<|>)\s*[\w>.-]*\b(?:mthd|method)\b')
PBW_CALL = re.compile(r'\bvgt_pbw_(?:inc|non_inc|one_inc|1|immd)\s*\([^,]+,[^,]+,\s*(' + HEX + r')\b')


def class_tables():
    tables = []
    d = os.path.join(FACTS, 'classes')
    for f in sorted(os.listdir(d)):
        if f.endswith('.cls'):
            tables.append(gen_classes.resolve(gen_classes.parse_table(os.path.join(d, f))))
    return tables


def offsets(tables):
    """offset -> set of method names at it (array elements included), over every class."""
    at = {}
    for c in tables:
        for m in c['methods']:
            for j in range(m['count'] if m['stride'] else 1):
                at.setdefault(m['offset'] + j * m['stride'], set()).add(m['name'])
    return at


def value(text):
    return int(text.rstrip('uUlL'), 16)


def sources():
    for top in SCANNED:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d != 'facts']
            for f in files:
                if f.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, f)


def stray(path, at):
    found = []
    text = open(path, encoding='utf-8', errors='replace').read()
    text = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)   # comments
    for n, line in enumerate(text.split('\n'), 1):
        line = line.split('//')[0]
        for m in NAMED.finditer(line):
            name, v = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            names = at.get(value(v), ())
            hit = [x for x in names if name == x or name.endswith('_' + x) or ('_' in name and x.endswith('_' + name))]
            if hit:
                found.append('%s:%d: %s = %s is %s' % (os.path.relpath(path, ROOT), n, name, v, '/'.join(sorted(hit))))
        for rx in (METHOD_EXPR, PBW_CALL):
            for m in rx.finditer(line):
                v = [g for g in m.groups() if g][0]
                if value(v) >= 0x100 and value(v) in at:   # host methods below 0x100 collide with small numbers
                    found.append('%s:%d: method offset %s (%s) written by hand' % (
                        os.path.relpath(path, ROOT), n, v, '/'.join(sorted(at[value(v)])[:3])))
    return found


def scan(root_sources=None):
    at = offsets(class_tables())
    out = []
    for p in (root_sources or sources()):
        out += stray(p, at)
    return out


def test_no_stray_method_offsets():
    found = scan()
    assert not found, 'method offsets written by hand (use the vgt/nv/clXXXX.h constants):\n' + '\n'.join(found)


def test_the_scan_finds_what_it_looks_for(tmp_path):
    p = tmp_path / 'sample.c'
    p.write_text('#define CE_LAUNCH_DMA 0x300u\nenum { X = 1, NOTIFY_A = 0x104, };\n'
                 'if (m->mthd == 0x1b0c) return;\nvgt_pbw_inc(&pb, 4, 0x240, v, 3);\n'
                 '#define BUF_SIZE 0x300u   /* not a method name */\nx = len - 0x800;\n')
    found = stray(str(p), offsets(class_tables()))
    assert len(found) == 4, found


if __name__ == '__main__':
    print('\n'.join(scan()))
