#!/usr/bin/env python3
"""gen_classes.py: turn the NVIDIA facts (trace-format/facts/) into C. Run by trace-format/facts/CMakeLists.txt
(and analyze/CMakeLists.txt for the decoding tables) at build time; the outputs go to the build tree.

    gen_classes.py table OUT.c TABLE.cls...            analyze's decoding tables (names, fields, enums)
    gen_classes.py headers OUTDIR TABLE.cls...         OUTDIR/vgt/nv/clXXXX.h (one per class: method offsets,
                                                       field shifts/masks, enum values) and OUTDIR/vgt/nv_classes.h
    gen_classes.py facts OUT.c OUT.h FAMILIES ADDRESSES TABLE.cls...
                                                       the class family/trait table and the address operands
                                                       (trace-format's nv_facts.c reads them)
    gen_classes.py --check [FAMILIES ADDRESSES] TABLE.cls...   parse and validate only

Table format (one directive a line; '#' starts a comment line; indentation is for the reader):
    class <ID hex> <NAME> <host|3d|compute|copy|i2m|2d> [qmd=<V02_02|V02_03|V03_00|V04_00>]
    source <where the facts come from>
    m <offset> <NAME> [stride=<bytes>] [count=<n>] [float]    a method; stride makes it an array
    f <hi>:<lo> <NAME> [float] [signed]                       a field of the last method
    e <value> <NAME>                                          an enum value of the last field
A table's file name starts with its class id in lower case (c86f_...cls): the header is named after it.
families.txt holds class lines (with source lines) of classes without a method table, and the MME ranges
("mme <first> <last> <fermi|tu104>"); addresses.txt the address operands (its own header says how).

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
FAMILIES = ['host', '3d', 'compute', 'copy', 'i2m', '2d']   # VGT_NV_* values 1.. in this order (nv_facts.h)
QMD_VERSIONS = ['V02_02', 'V02_03', 'V03_00', 'V04_00']      # VGT_NV_QMD_* values 1.. (vgt_qmd_version's)
MME_FORMATS = ['tu104', 'fermi']                              # VGT_NV_MME_* values 1.. (vgt_mme_format's)
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


def parse_class_line(tok, where):
    if len(tok) < 3 or tok[2] not in KINDS or not NAME.match(tok[1]):
        raise TableError('%s: expected "class <ID> <NAME> <%s> [qmd=<version>]"' % (where, '|'.join(KINDS)))
    c = dict(id=num('0x' + tok[0], where), name=tok[1], kind=tok[2], where=where, qmd=None)
    for t in tok[3:]:
        key, _, val = t.partition('=')
        if key != 'qmd' or val not in QMD_VERSIONS:
            raise TableError('%s: unknown trait "%s" (expected qmd=%s)' % (where, t, '|'.join(QMD_VERSIONS)))
        if c['kind'] != 'compute':
            raise TableError('%s: only a compute class has a QMD version' % where)
        c['qmd'] = val
    return c


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
            cls = dict(cls or {}, **parse_class_line(tok, where), methods=[])
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
    w('/* classes_table.c: generated by trace-format/facts/gen_classes.py from %s. Do not edit: change the tables\n'
      ' * (the .cls files in trace-format/facts/classes/) and rebuild. */\n' % ', '.join(sorted(os.path.basename(p) for p in inputs)))
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


def parse_families(path):
    """Classes without a method table, and the MME ranges."""
    classes, mme, cls = [], [], None
    for lineno, raw in enumerate(open(path, encoding='utf-8'), 1):
        where = '%s:%d' % (path, lineno)
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        word, _, rest = line.partition(' ')
        tok = rest.split()
        if word == 'class':
            cls = dict(parse_class_line(tok, where), source='', methods=[], table=False)
            classes.append(cls)
        elif word == 'source' and cls is not None:
            cls['source'] = rest.strip()
        elif word == 'mme':
            if len(tok) != 3 or tok[2] not in MME_FORMATS:
                raise TableError('%s: expected "mme <first> <last> <%s>"' % (where, '|'.join(MME_FORMATS)))
            lo, hi = num(tok[0], where), num(tok[1], where)
            if lo > hi or any(lo <= r[1] and r[0] <= hi for r in mme):
                raise TableError('%s: MME range 0x%x..0x%x is empty or overlaps another' % (where, lo, hi))
            mme.append((lo, hi, tok[2]))
        else:
            raise TableError('%s: unknown directive "%s"' % (where, word))
    return classes, sorted(mme)


def mme_of(mme, cls):
    for lo, hi, fmt in mme:
        if lo <= cls <= hi:
            return fmt
    return None


def quoted(rest, where):
    m = re.match(r'^(.*?)\s*"([^"]*)"\s*$', rest)
    if not m:
        raise TableError('%s: expected a quoted name at the end of the line' % where)
    return m.group(1).split(), m.group(2)


def parse_addresses(path, classes):
    """The address operands, their methods resolved against the class tables of their family."""
    roles, methods, qmds = [], [], []
    by_family = {}
    for c in classes:
        by_family.setdefault(c['kind'], []).append(c)
    for lineno, raw in enumerate(open(path, encoding='utf-8'), 1):
        where = '%s:%d' % (path, lineno)
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        word, _, rest = line.partition(' ')
        if word == 'role':
            tok, text = quoted(rest, where)
            if len(tok) != 1 or not NAME.match(tok[0]) or tok[0] in [r[0] for r in roles]:
                raise TableError('%s: expected "role <NEW_NAME> \"<what>\""' % where)
            roles.append((tok[0], text))
            continue
        tok, text = quoted(rest, where)
        opts = {}
        while tok and '=' in tok[-1]:
            k, _, v = tok.pop().partition('=')
            opts[k] = v
        role = opts.pop('role', None)
        if role not in [r[0] for r in roles]:
            raise TableError('%s: role "%s" is not declared (role lines come first)' % (where, role))
        shift = num(opts.pop('shift', '0'), where)
        if word == 'method':
            if len(tok) != 3 or tok[0] not in FAMILIES:
                raise TableError('%s: expected "method <family> <high>|- <low> mask=.. role=.. \"name\""' % where)
            mask = num(opts.pop('mask', '0'), where)
            if opts:
                raise TableError('%s: unknown options %s' % (where, ', '.join(opts)))
            fam, hi, lo = tok
            if (hi == '-') != (mask == 0):
                raise TableError('%s: a high method needs a mask, a one-method address none' % where)
            placed = None
            for c in by_family.get(fam, []):
                ms = {m['name']: m for m in c['methods']}
                if lo not in ms or (hi != '-' and hi not in ms):
                    continue
                mlo, mhi = ms[lo], ms.get(hi)
                here = (mhi['offset'] if mhi else 0, mlo['offset'], mlo['count'], mlo['stride'])
                if mhi and (mhi['count'], mhi['stride']) != (mlo['count'], mlo['stride']):
                    raise TableError('%s: %s and %s of %04X are not arrays of one shape' % (where, hi, lo, c['id']))
                if placed and placed[0] != here:
                    raise TableError('%s: %s/%s sit at %s in %04X but at %s in %04X' % (
                        where, hi, lo, here, c['id'], placed[0], placed[1]))
                placed = placed or (here, c['id'])
            if not placed:
                raise TableError('%s: no %s class defines %s and %s' % (where, fam, hi, lo))
            methods.append(dict(family=fam, hi=hi, lo=lo, hi_off=placed[0][0], lo_off=placed[0][1],
                                count=placed[0][2], stride=placed[0][3], mask=mask, shift=shift, role=role, name=text))
        elif word == 'qmd':
            if len(tok) != 2 or opts:
                raise TableError('%s: expected "qmd <lower> <upper>|- [shift=n] role=.. \"what\""' % where)
            qmds.append(dict(lower=tok[0], upper=None if tok[1] == '-' else tok[1], shift=shift, role=role, what=text))
        else:
            raise TableError('%s: unknown directive "%s"' % (where, word))
    return roles, methods, qmds


def header_name(path, cls):
    base = os.path.basename(path)
    if not base.lower().startswith('%04x_' % cls['id']):
        raise TableError('%s: the file name must start with the class id (%04x_)' % (path, cls['id']))
    return 'cl%04x.h' % cls['id']


def emit_header(cls, path, out):
    """One class's constants: NV<ID>_<METHOD> (a macro of j for arrays), _<FIELD>_SHIFT/_MASK, _<FIELD>_<ENUM>."""
    tag = 'NV%04X' % cls['id']
    seen = {}
    lines = []

    def define(name, value, what):
        if name in seen:
            if seen[name] == value:
                return
            raise TableError('%s: %s is both %s and %s' % (path, name, seen[name], value))
        seen[name] = value
        lines.append('#define %-60s %s%s\n' % (name, value, ('   /* %s */' % what) if what else ''))

    define('%s_CLASS' % tag, '0x%04Xu' % cls['id'], cls['name'])
    for m in cls['methods']:
        name = '%s_%s' % (tag, m['name'])
        if m['stride']:
            define(name + '(j)', '(0x%04xu + (uint32_t)(j) * 0x%xu)' % (m['offset'], m['stride']), None)
            seen[name] = 'array'
            define(name + '__SIZE', '%du' % m['count'], 'elements')
        else:
            define(name, '0x%04xu' % m['offset'], None)
    for m in cls['methods']:
        for f in m['fields']:
            fname = '%s_%s_%s' % (tag, m['name'], f['name'])
            width = f['hi'] - f['lo'] + 1
            mask = ((1 << width) - 1) << f['lo']
            define(fname + '_SHIFT', '%du' % f['lo'], None)
            define(fname + '_MASK', '0x%08xu' % mask, '%d:%d' % (f['hi'], f['lo']))
            for v, en in f['enums']:
                define('%s_%s' % (fname, en), '0x%xu' % v, None)
    guard = 'VGT_NV_CL%04X_H' % cls['id']
    out.write('/* cl%04x.h: %s (0x%04X) methods, fields and values. Generated by trace-format/facts/gen_classes.py\n'
              ' * from trace-format/facts/classes/%s; do not edit: change the table and rebuild.\n'
              ' * Source: %s */\n' % (cls['id'], cls['name'], cls['id'], os.path.basename(path), cls.get('source', '')))
    out.write('#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n' % (guard, guard))
    out.writelines(lines)
    out.write('\n#endif\n')


def write_if_changed(path, text):
    """Only a changed header gets a new time stamp, so a data change rebuilds only what includes it."""
    try:
        if open(path, encoding='utf-8').read() == text:
            return
    except OSError:
        pass
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, path)


def emit_headers(classes, paths, outdir):
    import io
    d = os.path.join(outdir, 'vgt', 'nv')
    os.makedirs(d, exist_ok=True)
    names = []
    for c, p in zip(classes, paths):
        h = header_name(p, c)
        buf = io.StringIO()
        emit_header(c, p, buf)
        write_if_changed(os.path.join(d, h), buf.getvalue())
        names.append((c, h))
    text = ('/* nv_classes.h: every class table\'s constants (vgt/nv/clXXXX.h). Generated by\n'
            ' * trace-format/facts/gen_classes.py; do not edit. */\n#ifndef VGT_NV_CLASSES_H\n#define VGT_NV_CLASSES_H\n\n')
    for c, h in sorted(names, key=lambda x: x[0]['id']):
        text += '#include "vgt/nv/%s"   /* %s */\n' % (h, c['name'])
    text += '\n#endif\n'
    write_if_changed(os.path.join(outdir, 'vgt', 'nv_classes.h'), text)


def emit_facts(classes, extra, mme, roles, methods, qmds, out_c, out_h, inputs):
    allc = sorted([dict(c, table=True) for c in classes] + extra, key=lambda c: c['id'])
    for a, b in zip(allc, allc[1:]):
        if a['id'] == b['id']:
            raise TableError('class %04X is listed twice (%s, %s)' % (a['id'], a['where'], b['where']))
    fam = lambda f: 'VGT_NV_FAM_%s' % f.upper()
    h = ['/* nv_facts_gen.h: counts and roles generated by trace-format/facts/gen_classes.py from families.txt,\n'
         ' * addresses.txt and the class tables; do not edit. Included by vgt/nv_facts.h. */\n',
         '#ifndef VGT_NV_FACTS_GEN_H\n#define VGT_NV_FACTS_GEN_H\n\n',
         '#define VGT_NV_CLASS_COUNT %du\n' % len(allc),
         '#define VGT_NV_ADDR_METHOD_COUNT %du\n' % len(methods),
         '#define VGT_NV_ADDR_METHOD_SLOTS %du   /* array elements of all method operands together */\n'
         % sum(m['count'] for m in methods),
         '#define VGT_NV_ADDR_QMD_COUNT %du\n\n' % len(qmds),
         '/* What an address operand points at (addresses.txt role lines). */\n',
         'typedef enum vgt_nv_addr_role {\n    VGT_NV_ADDR_NONE = 0,\n']
    for i, (r, text) in enumerate(roles):
        h.append('    VGT_NV_ADDR_%s = %d,   /* %s */\n' % (r, i + 1, text))
    h.append('    VGT_NV_ADDR_ROLE_COUNT_\n} vgt_nv_addr_role;\n\n#endif\n')
    write_if_changed(out_h, ''.join(h))
    c = ['/* nv_facts_table.c: generated by trace-format/facts/gen_classes.py from %s; do not edit. */\n'
         % ', '.join(sorted(os.path.basename(p) for p in inputs)),
         '#include "vgt/nv_facts.h"\n\n',
         'const vgt_nv_class vgt_nv_classes_[VGT_NV_CLASS_COUNT] = {\n']
    for k in allc:
        m = mme_of(mme, k['id']) if k['kind'] in ('3d', 'compute') else None
        c.append('    {0x%04X, "%s", %s, %s, %s, %d, %s},\n' % (
            k['id'], k['name'], fam(k['kind']),
            'VGT_NV_QMD_%s' % k['qmd'] if k['qmd'] else 'VGT_NV_QMD_NONE',
            'VGT_NV_MME_%s' % m.upper() if m else 'VGT_NV_MME_NONE', 1 if k['table'] else 0, c_string(k.get('source', ''))))
    c.append('};\n\nconst vgt_nv_mme_range vgt_nv_mme_ranges_[] = {\n')
    for lo, hi, f in mme:
        c.append('    {0x%04X, 0x%04X, VGT_NV_MME_%s},\n' % (lo, hi, f.upper()))
    c.append('};\nconst uint32_t vgt_nv_mme_range_count_ = %d;\n\n' % len(mme))
    c.append('const char *const vgt_nv_addr_role_names_[VGT_NV_ADDR_ROLE_COUNT_] = {"NONE", %s};\n\n'
             % ', '.join('"%s"' % r for r, _ in roles))
    c.append('const vgt_nv_addr_method vgt_nv_addr_methods_[VGT_NV_ADDR_METHOD_COUNT] = {\n')
    for m in methods:
        c.append('    {%s, 0x%04x, 0x%04x, 0x%xu, %d, %d, %d, VGT_NV_ADDR_%s, %s},   /* %s/%s */\n' % (
            fam(m['family']), m['hi_off'], m['lo_off'], m['mask'], m['shift'], m['count'], m['stride'], m['role'],
            c_string(m['name']), m['hi'], m['lo']))
    c.append('};\n\nconst vgt_nv_addr_qmd vgt_nv_addr_qmd_[VGT_NV_ADDR_QMD_COUNT] = {\n')
    for q in qmds:
        c.append('    {%s, %s, %d, VGT_NV_ADDR_%s, %s},\n' % (c_string(q['lower']), c_string(q['upper']) if q['upper'] else '0',
                                                          q['shift'], q['role'], c_string(q['what'])))
    c.append('};\n')
    write_if_changed(out_c, ''.join(c))


def load(paths):
    classes = [resolve(parse_table(p)) for p in paths]
    ids = {}
    for c, p in zip(classes, paths):
        if c['id'] in ids:
            raise TableError('class %04X in both %s and %s' % (c['id'], ids[c['id']], p))
        ids[c['id']] = p
    return classes


def main(argv):
    usage = ('usage: gen_classes.py table OUT.c TABLE.cls... | headers OUTDIR TABLE.cls... |\n'
             '       facts OUT.c OUT.h FAMILIES ADDRESSES TABLE.cls... | --check [FAMILIES ADDRESSES] TABLE.cls...\n')
    if len(argv) < 3:
        sys.stderr.write(usage)
        return 2
    mode = argv[1]
    try:
        if mode == 'table':
            inputs = argv[3:]
            classes = sorted(load(inputs), key=lambda c: c['id'])
            tmp = argv[2] + '.tmp'
            with open(tmp, 'w', encoding='utf-8') as out:
                emit(classes, out, inputs)
            os.replace(tmp, argv[2])
        elif mode == 'headers':
            emit_headers(load(argv[3:]), argv[3:], argv[2])
        elif mode == 'facts' and len(argv) >= 7:
            inputs = argv[6:]
            classes = load(inputs)
            for c, p in zip(classes, inputs):
                header_name(p, c)
            extra, mme = parse_families(argv[4])
            roles, methods, qmds = parse_addresses(argv[5], classes)
            emit_facts(classes, extra, mme, roles, methods, qmds, argv[2], argv[3], inputs + argv[4:6])
        elif mode == '--check':
            rest = argv[2:]
            tables = [p for p in rest if p.endswith('.cls')]
            classes = load(tables)
            others = [p for p in rest if not p.endswith('.cls')]
            if len(others) == 2:
                extra, mme = parse_families(others[0])
                parse_addresses(others[1], classes)
                classes += extra
            for c in sorted(classes, key=lambda c: c['id']):
                print('%04X %-28s %-8s %4d methods' % (c['id'], c['name'], c['kind'], len(c['methods'])))
        else:
            sys.stderr.write(usage)
            return 2
    except (TableError, OSError) as e:
        sys.stderr.write('gen_classes.py: %s\n' % e)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
