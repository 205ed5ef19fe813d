#!/usr/bin/env python3
"""manhelp.py: kprofctl's per-verb help, generated from its man page at build time.

  python3 cli/manhelp.py docs/man/kprofctl.1 > $(BUILD)/cli/manhelp.h

`kprofctl VERB --help` and `kprofctl help VERB` print the section of VERB in the VERBS part of
kprofctl(1) (a `.SS VERB ...` heading and what follows it up to the next .SS or .SH), rendered
as man renders it: the heading as a usage line, paragraphs filled and wrapped at 79 columns,
.TP tags on a line of their own with their text indented under them, .nf blocks as they are.
The header holds a table { verb, text }, ASCII only.

The page is written in a small subset of man(7) and roff; this script reads the whole page and
knows exactly that subset: any other request, escape or construct (a blank line, a font macro
without arguments) stops the build with the line it is on, so the page and the help cannot
drift apart through something this script would skip.
"""
import sys

WIDTH = 79  # the longest line of a help text
TAG_INDENT = 2  # a .TP tag, from the paragraph margin
BODY_INDENT = 6  # the text under a tag (and of .IP)
RS_INDENT = 4  # .RS without an argument

# \(xx special characters the page may use, as ASCII.
SPECIAL = {"em": "--", "dq": '"'}
# Font changes, dropped: the help is plain text.
FONTS = "BIRP"
FONT_MACROS = {"B", "I", "BR", "RB", "IR", "RI", "BI", "IB"}
# Requests that take no argument (an argument is a mistake this script would not render).
NO_ARGS = {"PP", "LP", "P", "TP", "RE", "nf", "fi", "br"}


class Error(Exception):
    pass


def unescape(s):
    """The text of roff input s: escapes resolved, fonts dropped."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = s[i + 1 : i + 2]
        if e == "-":
            out.append("-")
            i += 2
        elif e == "e":
            out.append("\\")
            i += 2
        elif e == "&":
            i += 2
        elif e == "f":
            if s[i + 2 : i + 3] not in tuple(FONTS):
                raise Error(f"font escape {s[i:i + 3]!r} (the help knows \\f[{FONTS}])")
            i += 3
        elif e == "(":
            name = s[i + 2 : i + 4]
            if name not in SPECIAL:
                raise Error(f"special character \\({name} (known: {', '.join(SPECIAL)})")
            out.append(SPECIAL[name])
            i += 4
        else:
            raise Error(f"escape {s[i:i + 2]!r}")
    return "".join(out)


def split_args(s):
    """The arguments of a macro line, split as roff does: by spaces, "..." quotes one with its
    spaces ("" in it is a quote)."""
    args, i, n = [], 0, len(s)
    while True:
        while i < n and s[i] == " ":
            i += 1
        if i >= n:
            return args
        if s[i] == '"':
            i += 1
            a = []
            while i < n:
                if s[i] == '"':
                    if s[i + 1 : i + 2] == '"':
                        a.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                a.append(s[i])
                i += 1
            args.append("".join(a))
        else:
            j = i
            while j < n and s[j] != " ":
                if s[j] == "\\":
                    j += 1
                j += 1
            args.append(s[i:j])
            i = j


def wrap(words, indent, first=None, width=WIDTH):
    """Lines of words filled to width, at indent; the first line starts with first instead."""
    lines, cur = [], first if first is not None else " " * indent
    fresh = True
    for w in words:
        if not fresh and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur, fresh = " " * indent, True
        cur += w if fresh else " " + w
        fresh = False
    if not fresh or first is not None:
        lines.append(cur.rstrip())
    return lines


class Section:
    """One verb's help text, built line by line as roff fills it."""

    def __init__(self, heading):
        self.verb = heading.split()[0]
        first = f"Usage: kprofctl {self.verb} "
        self.lines = wrap(heading.split()[1:], len("Usage: "), first=first)
        self.lines = [line.rstrip() for line in self.lines]
        self.words = []
        self.margin = 0  # the paragraph margin (.RS moves it)
        self.indent = 0  # the current text's indent
        self.stack = []  # margins saved by .RS
        self.fill = True
        self.gap = True  # a blank line before the next text
        self.tag = False  # the next text line is a .TP tag

    def flush(self):
        if self.words:
            self.emit(wrap(self.words, self.indent))
            self.words = []

    def emit(self, lines):
        if self.gap and self.lines and self.lines[-1] != "":
            self.lines.append("")
        self.gap = False
        self.lines.extend(lines)

    def paragraph(self, indent):
        self.flush()
        self.indent = indent
        self.gap = True

    def text(self, t):
        if self.tag:
            self.emit([" " * (self.margin + TAG_INDENT) + t.strip()])
            self.tag = False
            self.indent = self.margin + BODY_INDENT
        elif not self.fill:
            self.flush()
            self.emit([(" " * self.indent + t).rstrip()])
        else:
            if t.startswith(" "):  # roff breaks the line before a leading space
                self.flush()
            self.words.extend(t.split())

    def request(self, name, args):
        if name in ("PP", "LP", "P"):
            self.paragraph(self.margin)
        elif name == "TP":
            self.paragraph(self.margin)
            self.tag = True
        elif name == "IP":
            self.paragraph(self.margin + BODY_INDENT)
            if args:
                self.emit([" " * (self.margin + TAG_INDENT) + unescape(args[0])])
        elif name == "RS":
            self.flush()
            self.stack.append(self.margin)
            self.margin = self.indent + (int(args[0]) if args else RS_INDENT)
            self.indent = self.margin
        elif name == "RE":
            if not self.stack:
                raise Error(".RE without .RS")
            self.flush()
            self.margin = self.indent = self.stack.pop()
        elif name == "nf":
            self.flush()
            self.fill = False
        elif name == "fi":
            self.fill = True
        elif name == "br":
            self.flush()

    def finish(self):
        self.flush()
        if self.stack:
            raise Error(f"{self.verb}: .RS without .RE")
        if self.tag:
            raise Error(f"{self.verb}: .TP without a tag")
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        return "\n".join(self.lines) + "\n"


def render(lines):
    """{verb: text} of the .SS sections of VERBS; raises Error(line number, why)."""
    out, sect, section = {}, None, None

    def close():
        if sect is not None:
            if sect.verb in out:
                raise Error(f".SS {sect.verb} twice")
            out[sect.verb] = sect.finish()

    for no, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        try:
            cut = line.find('\\"')  # a comment, to the end of the line
            if line.startswith('.\\"'):
                continue
            if cut >= 0:
                line = line[:cut].rstrip()
            if line == "":
                raise Error("blank line (roff would print one: use .PP)")
            if line.startswith("'"):
                raise Error("control line with ' (use .)")
            if not line.startswith("."):
                text = unescape(line)  # checked everywhere, used in the verbs' sections
                if sect:
                    sect.text(text)
                continue
            parts = line[1:].split(None, 1)
            name = parts[0] if parts else ""
            args = split_args(parts[1]) if len(parts) > 1 else []
            if name in NO_ARGS and args:
                raise Error(f".{name} takes no argument here")
            if name == "TH":
                continue
            if name == "SH":
                close()
                sect, section = None, " ".join(unescape(a) for a in args)
            elif name == "SS":
                if not args:
                    raise Error(".SS without a heading")
                close()
                sect = Section(unescape(" ".join(args))) if section == "VERBS" else None
            elif name in FONT_MACROS:
                if not args:
                    raise Error(f".{name} without arguments (the next line's font)")
                text = (" " if len(name) == 1 else "").join(unescape(a) for a in args)
                if sect:
                    sect.text(text)
            elif name in ("PP", "LP", "P", "TP", "IP", "RS", "RE", "nf", "fi", "br"):
                if name == "RS" and args and not args[0].isdigit():
                    raise Error(f".RS {args[0]}: the help knows a number of ens")
                if sect:
                    sect.request(name, args)
            else:
                raise Error(f"request .{name} (the help knows .TH .SH .SS .PP .TP .IP .RS .RE "
                            f".nf .fi .br and .{' .'.join(sorted(FONT_MACROS))})")
        except Error as e:
            raise Error(f"line {no}: {e}") from None
    close()
    return out


def c_string(text):
    lines = text.split("\n")
    parts = []
    for i, line in enumerate(lines):
        if i == len(lines) - 1 and line == "":
            break
        s = line.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'\t "{s}\\n"')
    return "\n".join(parts)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: manhelp.py kprofctl.1 > manhelp.h")
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        try:
            verbs = render(f)
        except Error as e:
            sys.exit(f"{path}:{str(e)[5:]}" if str(e).startswith("line ") else f"{path}: {e}")
    if not verbs:
        sys.exit(f"{path}: no .SS section under .SH VERBS")
    for verb, text in verbs.items():
        if not text.isascii():
            sys.exit(f"{path}: the help of {verb} is not ASCII")
        long = [line for line in text.split("\n") if len(line) > WIDTH]
        if long:
            sys.exit(f"{path}: the help of {verb} has a line over {WIDTH} columns: {long[0]}")
    print(f"/* manhelp.h: generated by cli/manhelp.py from {path}; do not edit. */")
    print("/* The help of each verb: its section of kprofctl(1), as man renders it. */")
    print("#ifndef KPROF_CLI_MANHELP_H\n#define KPROF_CLI_MANHELP_H\n")
    print("struct manhelp {\n\tconst char *verb;\n\tconst char *text;\n};\n")
    print("static const struct manhelp manhelp[] = {")
    for verb, text in verbs.items():
        print(f'    {{"{verb}",\n{c_string(text)}}},')
    print("};\n\n#endif")


if __name__ == "__main__":
    main()
