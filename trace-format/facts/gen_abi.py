#!/usr/bin/env python3
"""gen_abi.py: turn the RM/UVM ABI table (trace-format/facts/rm_abi.txt) into vgt/nv_abi.h.

    gen_abi.py OUT.h rm_abi.txt        (run by trace-format/facts/CMakeLists.txt at build time)
    gen_abi.py --check rm_abi.txt      (parse and validate only)

The table's own header describes its lines. Every struct becomes a C struct whose fields sit at the
offsets the table gives (explicit padding in between), and every offset and size is checked at compile
time (_Static_assert), so a wrong line does not build. The status lines become RM_<NAME> constants and
one X-macro list, VGT_NV_STATUS_LIST(X), that expands X(name, value) for each (names for messages).
Standard library only.
"""
import os
import re
import sys

TYPES = {'u8': ('uint8_t', 1), 'u16': ('uint16_t', 2), 'u32': ('uint32_t', 4), 'i32': ('int32_t', 4),
         'u64': ('uint64_t', 8)}
NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


class AbiError(Exception):
    pass


def num(text, where, consts=None):
    try:
        return int(text.rstrip('uUlL'), 0)
    except ValueError:
        if consts and text in consts:
            return consts[text]
        raise AbiError('%s: "%s" is not a number' % (where, text))


def parse(path):
    items, consts, structs, uvm, status = [], {}, {}, [], []
    cur = None
    for lineno, raw in enumerate(open(path, encoding='utf-8'), 1):
        where = '%s:%d' % (path, lineno)
        line = raw.rstrip()
        body, _, note = line.partition('#')
        note = note.strip()
        if not body.strip():
            if line.strip().startswith('#') and raw.startswith('#') and items and items[-1][0] == 'comment':
                items[-1][1].append(note)
            elif line.strip().startswith('#') and raw.startswith('#') and items:
                items.append(('comment', [note]))
            continue
        indented = raw[0] in ' \t'
        word, _, rest = body.strip().partition(' ')
        rest = rest.strip()
        if indented:
            if cur is None:
                raise AbiError('%s: a field outside a struct' % where)
            m = re.match(r'^(0x[0-9a-fA-F]+|\d+)\s+(?:struct\s+(\w+)|(\w+))\s+(\w+)(?:\[(\w+)\])?$', body.strip())
            if not m:
                raise AbiError('%s: expected "<offset> <type> <field>[[count]]"' % where)
            off = num(m.group(1), where)
            tname = m.group(2) or m.group(3)
            if m.group(2):
                if tname not in structs:
                    raise AbiError('%s: struct %s is not defined above' % (where, tname))
                ctype, size, align = tname, structs[tname]['size'], structs[tname]['align']
            elif tname in TYPES:
                ctype, size = TYPES[tname]
                align = size
            else:
                raise AbiError('%s: unknown type "%s"' % (where, tname))
            count = num(m.group(5), where, consts) if m.group(5) else None
            if off % align:
                raise AbiError('%s: %s at 0x%x is not %d-byte aligned' % (where, m.group(4), off, align))
            f = dict(off=off, ctype=ctype, size=size * (count or 1), name=m.group(4), count=m.group(5), note=note)
            if cur['fields'] and off < cur['fields'][-1]['off'] + cur['fields'][-1]['size']:
                raise AbiError('%s: %s at 0x%x overlaps the field before it' % (where, f['name'], off))
            cur['fields'].append(f)
            cur['align'] = max(cur['align'], align)
            continue
        cur = None
        if word == 'source':
            items.append(('source', rest))
        elif word == 'const':
            name, _, value = rest.partition(' ')
            if not NAME.match(name) or not value.strip() or name in consts:
                raise AbiError('%s: expected "const <NEW_NAME> <value>"' % where)
            try:
                consts[name] = int(value.strip().rstrip('uUlL'), 0)
            except ValueError:
                consts[name] = None   # an expression: C evaluates it
            items.append(('const', name, value.strip(), note))
        elif word == 'struct':
            tok = rest.split()
            if len(tok) != 2 or not NAME.match(tok[0]) or tok[0] in structs:
                raise AbiError('%s: expected "struct <new_name> <size>"' % where)
            cur = dict(name=tok[0], size=num(tok[1], where), fields=[], align=1, note=note)
            structs[tok[0]] = cur
            items.append(('struct', cur))
        elif word == 'status':
            tok = rest.split()
            if len(tok) != 2 or not NAME.match(tok[0]) or not tok[0].startswith('NV_'):
                raise AbiError('%s: expected "status <NV_NAME> <value>"' % where)
            value = num(tok[1], where)
            for n, v in status:
                if n == tok[0] or v == value:
                    raise AbiError('%s: status %s 0x%x repeats %s 0x%x' % (where, tok[0], value, n, v))
            status.append((tok[0], value))
            items.append(('status', tok[0], value, note))
        elif word == 'driver':
            tok = rest.split()
            if len(tok) < 2 or not tok[0].isdigit() or any(not v.startswith(tok[0] + '.') for v in tok[1:]):
                raise AbiError('%s: expected "driver <series> <checked version of that series>..."' % where)
            if any(it[0] == 'driver' for it in items):
                raise AbiError('%s: a second driver line' % where)
            items.append(('driver', int(tok[0]), tok[1:], note))
        elif word == 'uvm':
            tok = rest.split()
            if len(tok) != 3 or tok[2] not in structs:
                raise AbiError('%s: expected "uvm <NAME> <request> <struct defined above>"' % where)
            uvm.append((tok[0], num(tok[1], where), tok[2]))
        else:
            raise AbiError('%s: unknown directive "%s"' % (where, word))
    if not any(it[0] == 'driver' for it in items):
        raise AbiError('%s: no "driver <series> <versions>" line: the table must say which driver it is for' % path)
    for s in structs.values():
        end = s['fields'][-1]['off'] + s['fields'][-1]['size'] if s['fields'] else 0
        if end > s['size'] or s['size'] % s['align']:
            raise AbiError('%s: struct %s: fields end at 0x%x, size 0x%x (alignment %d)' % (
                path, s['name'], end, s['size'], s['align']))
    return items, uvm, status


def emit(items, uvm, status, src):
    o = ['/* nv_abi.h: the RM/UVM user-space ABI. Generated by trace-format/facts/gen_abi.py from\n'
         ' * trace-format/facts/%s; do not edit: change the table and rebuild. Every offset and size below\n'
         ' * is checked at compile time. */\n' % os.path.basename(src),
         '#ifndef VGT_NV_ABI_H\n#define VGT_NV_ABI_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n',
         '#define RM_CHECK_SIZE(t, n) _Static_assert(sizeof(t) == (n), #t " must be " #n " bytes")\n',
         '#define RM_CHECK_OFF(t, f, n) _Static_assert(offsetof(t, f) == (n), #t "." #f " must be at " #n)\n',
         '/* An RM escape\'s request: _IOWR(\'F\', nr, size). */\n',
         '#define RM_REQUEST(nr, size) ((unsigned long)((3u << 30) | ((uint32_t)(size) << 16) | (0x46u << 8) | (uint32_t)(nr)))\n']
    for it in items:
        if it[0] == 'source':
            o.append('\n/* ---- %s ---- */\n' % it[1])
        elif it[0] == 'comment':
            o.append('/* %s */\n' % '\n * '.join(it[1]))
        elif it[0] == 'const':
            o.append('#define %-40s %s%s\n' % (it[1], it[2], ('   /* %s */' % it[3]) if it[3] else ''))
        elif it[0] == 'status':
            o.append('#define RM_%-37s 0x%xu%s\n' % (it[1], it[2], ('   /* %s */' % it[3]) if it[3] else ''))
        elif it[0] == 'driver':
            o.append('/* The driver series these layouts are for, and the exact versions they were checked against\n'
                     ' * (vgt_nv_abi_driver_check() in trace-format/src/nv_abi.c). */\n')
            o.append('#define VGT_NV_ABI_SERIES %du\n' % it[1])
            o.append('#define VGT_NV_ABI_CHECKED "%s"\n' % ' '.join(it[2]))
        else:
            s = it[1]
            o.append('typedef struct %s {%s\n' % (s['name'], ('   /* %s */' % s['note']) if s['note'] else ''))
            at, pad = 0, 0
            for f in s['fields']:
                if f['off'] > at:
                    o.append('    uint8_t pad%d[%d];\n' % (pad, f['off'] - at))
                    pad += 1
                o.append('    %s %s%s;   /* 0x%x%s */\n' % (f['ctype'], f['name'], '[%s]' % f['count'] if f['count'] else '',
                                                         f['off'], ': ' + f['note'] if f['note'] else ''))
                at = f['off'] + f['size']
            if s['size'] > at:
                o.append('    uint8_t pad%d[%d];\n' % (pad, s['size'] - at))
            o.append('} %s;\n' % s['name'])
            for f in s['fields']:
                o.append('RM_CHECK_OFF(%s, %s, 0x%x);\n' % (s['name'], f['name'], f['off']))
            o.append('RM_CHECK_SIZE(%s, 0x%x);\n' % (s['name'], s['size']))
    if status:
        o.append('\n/* The status lines above as a list: X(name, value) for each. */\n')
        o.append('#define VGT_NV_STATUS_LIST(X) \\\n%s\n' % ' \\\n'.join('    X(%s, 0x%xu)' % sv for sv in status))
    o.append('\n/* ---- UVM ioctls: the request is the raw number; the parameter block\'s size by request ---- */\n')
    for name, req, st in uvm:
        o.append('#define UVM_REQ_%-32s 0x%xul   /* %s */\n' % (name, req, st))
    o.append('static inline uint32_t vgt_nv_uvm_params_size(unsigned long request)\n{\n    switch (request) {\n')
    for name, req, st in uvm:
        o.append('    case UVM_REQ_%s: return (uint32_t)sizeof(%s);\n' % (name, st))
    o.append('    default: return 0;\n    }\n}\n')
    # what the capture knows by name; anything else is recorded raw and listed as unknown at the end
    known = {'ESC': [], 'CTRL': [], 'CLASS': []}
    for it in items:
        if it[0] != 'const':
            continue
        for k in known:
            if it[1].startswith('RM_%s_' % k) and not it[1].endswith(('_MAX', 'MAX_ENTRIES')):
                known[k].append(it[1])
    o.append('\n/* ---- what the table knows by name (the capture lists anything else as unknown) ---- */\n')
    for k, what in (('ESC', 'escapes'), ('CTRL', 'controls'), ('CLASS', 'classes')):
        o.append('static const uint32_t vgt_nv_abi_known_%s[] = {%s};\n' % (what, ', '.join(known[k])))
    o.append('static const uint32_t vgt_nv_abi_known_uvm[] = {%s};\n' % ', '.join('UVM_REQ_%s' % n for n, _, _ in uvm))
    o.append('\n#endif\n')
    return ''.join(o)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write('usage: gen_abi.py OUT.h rm_abi.txt | --check rm_abi.txt\n')
        return 2
    try:
        items, uvm, status = parse(argv[2])
    except (AbiError, OSError) as e:
        sys.stderr.write('gen_abi.py: %s\n' % e)
        return 1
    if argv[1] == '--check':
        return 0
    text = emit(items, uvm, status, argv[2])
    try:
        if open(argv[1], encoding='utf-8').read() == text:
            return 0
    except OSError:
        pass
    tmp = argv[1] + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, argv[1])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
