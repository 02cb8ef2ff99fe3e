#!/usr/bin/env python3
"""gen_classes.py: turn the class tables (the .cls files in analyze/classes/) into C for vgt_analyze.

    gen_classes.py OUT.c TABLE.cls...        (run by analyze/classes/CMakeLists.txt at build time)
    gen_classes.py --check TABLE.cls...      (parse and validate only)

Table format (one directive a line; '#' starts a comment line; indentation is for the reader):
    class <ID hex> <NAME> <host|3d|compute|copy|i2m|2d>
    source <where the facts come from>
    m <offset> <NAME> [stride=<bytes>] [count=<n>] [float]    a method; stride makes it an array
    f <hi>:<lo> <NAME> [float] [signed]                       a field of the last method
    e <value> <NAME>                                          an enum value of the last field

Class headers give an array's stride but not its size, and do not say which methods carry floats; those
two facts are the hand lists below (exceptions kept as data at the top, in the manner of Mesa's
class_parser.py). A count given in a table wins over the lists; an array in neither gets the largest
count that keeps its elements clear of the next method that is not interleaved with it.
Standard library only.
"""
import fnmatch
import os
import re
import sys

# Array sizes by method name (fnmatch patterns, first match wins; "CB97:NAME" limits a pattern to one
# class). Sources: Mesa's hand list of array sizes, the QMD sizes (64 dwords before Hopper, 96 on Hopper:
# open-gpu-doc's QMD headers) and the geometry of the headers themselves.
ARRAY_SIZES = [
    ('CBC0:LOAD_INLINE_QMD_DATA', 96),
    ('LOAD_INLINE_QMD_DATA', 64),
    ('SET_POLYGON_STIPPLE_PATTERN', 32),
    ('SET_SCG_COMPUTE_SCHEDULING_PARAMETERS', 16),
    ('SET_COLOR_TARGET_*', 8),
    ('SET_CT_WRITE', 8),
    ('SET_BLEND', 8),
    ('SET_BLEND_PER_TARGET_*', 8),
    ('SET_PIPELINE_*', 6),
    ('SET_VIEWPORT_SCALE_*', 16), ('SET_VIEWPORT_OFFSET_*', 16), ('SET_VIEWPORT_COORDINATE_SWIZZLE', 16),
    ('SET_VIEWPORT_INCREASE_SNAP_GRID_PRECISION', 16), ('SET_VIEWPORT_CLIP_*', 16),
    ('SET_SCISSOR_*', 16),
    ('SET_WINDOW_CLIP_*', 8),
    ('SET_COLOR_CLEAR_VALUE', 4),
    ('SET_STREAM_OUT_BUFFER_*', 4),
    ('SET_STREAM_OUT_CONTROL_*', 4),
    ('SET_VERTEX_STREAM_A_*', 16), ('SET_VERTEX_STREAM_B_*', 16),
    ('SET_VERTEX_STREAM_INSTANCE_*', 16),
    ('SET_VERTEX_ATTRIBUTE_*', 16),
    ('CALL_MME_MACRO', 256), ('CALL_MME_DATA', 256),
    ('SET_MME_SHADOW_SCRATCH', 256),
    ('LOAD_CONSTANT_BUFFER', 16),
    ('BIND_GROUP_*', 5),
]

# Methods whose 32-bit data is an IEEE-754 single (fnmatch patterns).
FLOAT_METHODS = [
    'SET_VIEWPORT_SCALE_?', 'SET_VIEWPORT_OFFSET_?', 'SET_VIEWPORT_CLIP_MIN_Z', 'SET_VIEWPORT_CLIP_MAX_Z',
    'SET_COLOR_CLEAR_VALUE', 'SET_Z_CLEAR_VALUE', 'SET_DEPTH_BOUNDS_MIN', 'SET_DEPTH_BOUNDS_MAX',
    'SET_ALPHA_REF', 'SET_BLEND_CONST_*', 'SET_LINE_WIDTH_FLOAT', 'SET_ALIASED_LINE_WIDTH_FLOAT',
    'SET_POINT_SIZE', 'SET_DEPTH_BIAS', 'SET_SLOPE_SCALE_DEPTH_BIAS', 'SET_DEPTH_BIAS_CLAMP',
    'SET_POSITION_W_SCALED_OFFSET_SCALE_?',
]

KINDS = {'host': 'VGT_CLASS_HOST', '3d': 'VGT_CLASS_3D', 'compute': 'VGT_CLASS_COMPUTE',
         'copy': 'VGT_CLASS_COPY', 'i2m': 'VGT_CLASS_I2M', '2d': 'VGT_CLASS_2D'}
METHOD_SPACE = 0x4000
NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


class TableError(Exception):
    pass


def num(text, where):
    try:
        return int(text, 0)
    except ValueError:
        raise TableError('%s: "%s" is not a number' % (where, text))


def parse_options(tokens, allowed, where):
    opts = {}
    for t in tokens:
        key, _, val = t.partition('=')
        if key not in allowed:
            raise TableError('%s: unknown option "%s" (expected one of %s)' % (where, t, ', '.join(allowed)))
        opts[key] = num(val, where) if val else True
    return opts


def parse_table(path):
    cls = None
    method = field = None
    for lineno, raw in enumerate(open(path, encoding='utf-8'), 1):
        where = '%s:%d' % (path, lineno)
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        word, _, rest = line.partition(' ')
        tok = rest.split()
        if word == 'source':
            if cls is None:
                cls = {'source': rest.strip()}
            else:
                cls['source'] = rest.strip()
        elif word == 'class':
            if len(tok) != 3 or tok[2] not in KINDS or not NAME.match(tok[1]):
                raise TableError('%s: expected "class <ID> <NAME> <%s>"' % (where, '|'.join(KINDS)))
            cls = dict(cls or {}, id=num('0x' + tok[0], where), name=tok[1], kind=tok[2], methods=[], where=where)
        elif cls is None or 'id' not in cls:
            raise TableError('%s: "%s" before the class line' % (where, word))
        elif word == 'm':
            if len(tok) < 2 or not NAME.match(tok[1]):
                raise TableError('%s: expected "m <offset> <NAME> [options]"' % where)
            off = num(tok[0], where)
            if off % 4 or off >= METHOD_SPACE:
                raise TableError('%s: method offset 0x%x is not a dword address below 0x%x' % (where, off, METHOD_SPACE))
            method = dict(offset=off, name=tok[1], fields=[], where=where,
                          **parse_options(tok[2:], ('stride', 'count', 'float'), where))
            cls['methods'].append(method)
            field = None
        elif word == 'f':
            m = re.match(r'^(\d+):(\d+)$', tok[0]) if tok else None
            if method is None or not m or len(tok) < 2 or not NAME.match(tok[1]):
                raise TableError('%s: expected "f <hi>:<lo> <NAME>" after a method' % where)
            hi, lo = int(m.group(1)), int(m.group(2))
            if hi > 31 or lo > hi:
                raise TableError('%s: bit range %d:%d is not within 31:0' % (where, hi, lo))
            field = dict(hi=hi, lo=lo, name=tok[1], enums=[], **parse_options(tok[2:], ('float', 'signed'), where))
            method['fields'].append(field)
        elif word == 'e':
            if field is None or len(tok) != 2:
                raise TableError('%s: expected "e <value> <NAME>" after a field' % where)
            v = num(tok[0], where)
            width = field['hi'] - field['lo'] + 1
            if v >= (1 << width):
                raise TableError('%s: enum %s = 0x%x does not fit field %s (%d bits)' % (where, tok[1], v, field['name'], width))
            field['enums'].append((v, tok[1]))
        else:
            raise TableError('%s: unknown directive "%s"' % (where, word))
    if cls is None or 'id' not in cls:
        raise TableError('%s: no class line' % path)
    return cls


def first_match(patterns, name, cls_id=None):
    for p in patterns:
        pat, val = p if isinstance(p, tuple) else (p, True)
        if ':' in pat:
            if cls_id is None:
                continue
            subject = '%04X:%s' % (cls_id, name)
        else:
            subject = name
        if fnmatch.fnmatchcase(subject, pat):
            return val
    return None


def infer_count(m, methods):
    """Largest count of whole elements below the next method that is not interleaved with this array."""
    base, stride = m['offset'], m['stride']
    end = METHOD_SPACE
    for o in methods:
        if o is m or o['offset'] <= base:
            continue
        sibling = o.get('stride') == stride and o['offset'] < base + stride
        if not sibling:
            end = min(end, o['offset'])
    return max(1, (end - base) // stride)


def resolve(cls):
    methods = sorted(cls['methods'], key=lambda m: m['offset'])
    seen = {}
    for m in methods:
        if m['offset'] in seen and not m.get('stride'):
            raise TableError('%s: method %s at 0x%04x repeats %s' % (m['where'], m['name'], m['offset'], seen[m['offset']]))
        seen.setdefault(m['offset'], m['name'])
    for m in methods:
        stride = m.get('stride', 0)
        if stride:
            if stride % 4:
                raise TableError('%s: stride %d is not a multiple of 4' % (m['where'], stride))
            m['count'] = m.get('count') or first_match(ARRAY_SIZES, m['name'], cls['id']) or infer_count(m, methods)
            if m['offset'] + (m['count'] - 1) * stride >= METHOD_SPACE:
                raise TableError('%s: %s(%d) runs past the method space' % (m['where'], m['name'], m['count'] - 1))
        else:
            m['stride'], m['count'] = 0, 1
        if m.get('float') or first_match(FLOAT_METHODS, m['name'], cls['id']):
            m['float'] = True
            for f in m['fields']:
                if f['hi'] == 31 and f['lo'] == 0:
                    f['float'] = True
    cls['methods'] = methods
    index = [0] * (METHOD_SPACE // 4)
    for n, m in enumerate(methods):   # scalars first, so an array never hides a method the header names
        if not m['stride']:
            index[m['offset'] // 4] = n + 1
    for n, m in enumerate(methods):
        for i in range(m['count'] if m['stride'] else 0):
            slot = (m['offset'] + i * m['stride']) // 4
            if not index[slot]:
                index[slot] = n + 1
    cls['index'] = index
    return cls


def c_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def emit(classes, out, inputs):
    w = out.write
    w('/* classes_table.c: generated by analyze/classes/gen_classes.py from %s. Do not edit: change the tables\n'
      ' * (the .cls files in analyze/classes/) and rebuild. */\n' % ', '.join(sorted(os.path.basename(p) for p in inputs)))
    w('#include "classes_table.h"\n\n')
    for c in classes:
        tag = '%04X' % c['id']
        for mi, m in enumerate(c['methods']):
            for fi, f in enumerate(m['fields']):
                if f['enums']:
                    w('static const vgt_class_enum e_%s_%d_%d[] = {%s};\n' % (tag, mi, fi, ', '.join(
                        '{0x%x, %s}' % (v, c_string(n)) for v, n in f['enums'])))
            if m['fields']:
                w('static const vgt_class_field f_%s_%d[] = {\n' % (tag, mi))
                for fi, f in enumerate(m['fields']):
                    flags = ' | '.join(x for x, k in (('VGT_CLASS_FIELD_FLOAT', 'float'), ('VGT_CLASS_FIELD_SIGNED', 'signed'))
                                       if f.get(k)) or '0'
                    enums = 'e_%s_%d_%d' % (tag, mi, fi) if f['enums'] else '0'
                    w('    {%s, %d, %d, %s, %d, %s},\n' % (c_string(f['name']), f['hi'], f['lo'], flags, len(f['enums']), enums))
                w('};\n')
        w('static const vgt_method_info m_%s[] = {\n' % tag)
        for mi, m in enumerate(c['methods']):
            w('    {0x%04x, %s, %d, %d, %d, %s},\n' % (m['offset'], c_string(m['name']), m['count'], m['stride'],
                                                    len(m['fields']), 'f_%s_%d' % (tag, mi) if m['fields'] else '0'))
        w('};\n')
        w('static const uint16_t ix_%s[%d] = {\n' % (tag, METHOD_SPACE // 4))
        ix = c['index']
        for i in range(0, len(ix), 16):
            w('    ' + ', '.join(str(v) for v in ix[i:i + 16]) + ',\n')
        w('};\n\n')
    w('const vgt_class vgt_classes_table_[] = {\n')
    for c in classes:
        tag = '%04X' % c['id']
        w('    {0x%04X, %s, %s, %s, %d, m_%s, ix_%s},\n' % (c['id'], c_string(c['name']), KINDS[c['kind']],
                                                       c_string(c.get('source', '')), len(c['methods']), tag, tag))
    w('};\nconst uint32_t vgt_classes_table_count_ = %d;\n' % len(classes))


def main(argv):
    check = len(argv) > 1 and argv[1] == '--check'
    if len(argv) < 3:
        sys.stderr.write('usage: gen_classes.py OUT.c TABLE.cls... | --check TABLE.cls...\n')
        return 2
    inputs = argv[2:]
    try:
        classes = [resolve(parse_table(p)) for p in inputs]
    except (TableError, OSError) as e:
        sys.stderr.write('gen_classes.py: %s\n' % e)
        return 1
    ids = {}
    for c, p in zip(classes, inputs):
        if c['id'] in ids:
            sys.stderr.write('gen_classes.py: class %04X in both %s and %s\n' % (c['id'], ids[c['id']], p))
            return 1
        ids[c['id']] = p
    classes.sort(key=lambda c: c['id'])
    if check:
        for c in classes:
            print('%04X %-28s %-8s %4d methods' % (c['id'], c['name'], c['kind'], len(c['methods'])))
        return 0
    tmp = argv[1] + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as out:
        emit(classes, out, inputs)
    os.replace(tmp, argv[1])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
