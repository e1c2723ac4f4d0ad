"""The AST rewrite of a @cute.kernel function: its ``for``/``if``/``while`` statements call the
helpers of control.py, which decide at trace time whether each is static (plain Python) or a
runtime region of the kernel IR.

As in CuTe DSL (``cutlass/base_dsl/ast_preprocessor.py``), the function's source is parsed,
rewritten and compiled again, keeping the user's file name and line numbers, so tracebacks and
error messages point at the user's code. A function whose source cannot be read (typed at a
prompt, built with exec) is used as it is: its control flow must then be static. Functions defined
inside the rewritten one (a helper loop passed on through functools.partial) are rewritten with it.

The shape of the rewrite, for ``for i in ITER: BODY`` (names are the variables BODY assigns)::

    __cl_l = __cl_rt.Loop(ITER, names, __cl_rt.grab(locals(), names), "file.py:12")
    for i in __cl_l:
        if __cl_l.dynamic: (a, b) = __cl_l.enter()
        BODY
        if __cl_l.dynamic: __cl_l.leave(locals())
    if __cl_l.dynamic: (a, b) = __cl_l.exit()

>>> import textwrap
>>> src = textwrap.dedent('''
... def f(n):
...     acc = 0
...     for i in range(n):
...         acc = acc + i
...     return acc
... ''')
>>> ns = {}
>>> exec(compile(rewrite_source(src, "<doc>", 0), "<doc>", "exec"), ns)
>>> ns["__cl_factory"](__import__("cutelab.kernel.frontend.control", fromlist=["x"]))(4)
6
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any, Callable, List, Optional, Tuple

__all__ = ["rewrite_function", "rewrite_source", "rewrite_host_function", "rewrite_traced_function"]

RT = "__cl_rt"


class _Assigned(ast.NodeVisitor):
    """Names a statement list binds (not counting nested functions, classes and comprehensions)."""

    def __init__(self) -> None:
        self.names: List[str] = []

    def _add(self, n: str) -> None:
        # '_' is never carried by a region, as in CuTe DSL (its preprocessor keeps '_' out of every scope):
        # CUTLASS's FMHA prefill unpacks 'a, _, b = f(...)' in a runtime loop where '_' is an Int32 before and
        # None inside
        if not n.startswith("__cl_") and n != "_" and n not in self.names:
            self.names.append(n)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._add(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        if getattr(node, "cl_rebind", False):
            # an inner region's rebinding of the names it carries (_unpack): not an assignment of the
            # program's; a name that the region's body assigns is found there, and one whose methods it
            # calls stays a changed-in-place object for the outer region (_invoked)
            self.visit(node.value)
            return
        self.generic_visit(node)

    def visit_FunctionDef(self, node: Any) -> None:
        self._add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node: Any) -> None:
        pass

    def visit_ListComp(self, node: Any) -> None:
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def _invoked(nodes: List[ast.AST], local: Any) -> List[str]:
    """Local names whose methods the nodes call (``tile_sched.advance_to_next_work()``) or whose
    attributes they assign (``self._current_work_idx = ...``): as in CuTe DSL, a region carries such an
    object (when it carries runtime values: carry.Carry), since the call or the assignment may change it
    in place. Names that are not the function's own locals are left out, and ``self`` unless the nodes
    assign its attributes (a method of an object of the value protocol changing it in a branch)."""
    out: List[str] = []

    def root(f: Any) -> Any:
        while isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute):
            f = f.value
        return f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None

    for node in nodes:
        for n in ast.walk(node):
            b, stored = None, False
            if isinstance(n, ast.Call):
                b = root(n.func)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                b, stored = root(n), True
            if b is not None and (stored or b != "self") and not b.startswith("__cl") and b in local \
                    and b not in out:
                out.append(b)
    return out


def _loop_targets(stmts: List[ast.stmt]) -> ast.Tuple:
    """Names bound as the targets of for-loops nested in stmts: an int they hold is the loop's own
    index, never a value carried into the enclosing region (carry.Carry does not promote it)."""
    out: List[str] = []
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.For):
                for x in ast.walk(n.target):
                    if isinstance(x, ast.Name) and x.id not in out:
                        out.append(x.id)
    return ast.Tuple(elts=[ast.Constant(n) for n in out], ctx=ast.Load())


def _set_before_read(stmts: List[ast.stmt], name: str) -> bool:
    """Whether each run of stmts (a loop's body) sets name before anything reads it: its value is
    then local to one iteration, never carried to the next. Assignments count at the top level and
    inside nested loops and branches when every read they reach follows them (a static loop that
    sets ``k_coord`` and reads it in its own body); a read that may see the value from before
    (after a loop that may not run, after a branch only one side of which sets it) does not."""
    reads, _ = _flow(stmts, name, False)
    return not reads and name in _assigned(stmts)


def _loads(node: Any, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _flow(stmts: List[ast.stmt], name: str, is_set: bool) -> Tuple[bool, bool]:
    """(whether stmts may read name before setting it, whether name is set after them), given
    whether it is set before them."""
    for st in stmts:
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            if st.value is not None and _loads(st.value, name) and not is_set:
                return True, is_set
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if any(isinstance(tg, ast.Name) and tg.id == name for tg in targets):
                is_set = True
            elif any(_loads(tg, name) for tg in targets) and not is_set:
                return True, is_set
            elif name in _assigned([st]):
                is_set = True  # unpacking into name among others
        elif isinstance(st, (ast.For, ast.While)):
            head = st.iter if isinstance(st, ast.For) else st.test
            if _loads(head, name) and not is_set:
                return True, is_set
            if isinstance(st, ast.For) and name in _assigned([ast.Assign(targets=[st.target], value=ast.Constant(0))]):
                return True, is_set  # the loop variable itself: leave it to the plain analysis
            reads, _ = _flow(st.body + st.orelse, name, is_set)
            if reads:
                return True, is_set
            # the body may run zero times: name is set after the loop only if it was before
        elif isinstance(st, ast.If):
            if _loads(st.test, name) and not is_set:
                return True, is_set
            r1, s1 = _flow(st.body, name, is_set)
            r2, s2 = _flow(st.orelse, name, is_set)
            if r1 or r2:
                return True, is_set
            is_set = s1 and s2
        else:
            if _loads(st, name) and not is_set:
                return True, is_set
            if name in _assigned([st]):
                if isinstance(st, ast.AugAssign) and not is_set:
                    return True, is_set
                is_set = True
    return False, is_set


def _assigned(stmts: List[ast.stmt]) -> List[str]:
    v = _Assigned()
    for s in stmts:
        v.visit(s)
    return v.names


class _Jumps(ast.NodeVisitor):
    """Does a statement list leave its region early (return; break/continue of an outer loop)?"""

    def __init__(self) -> None:
        self.found = False
        self.loop_depth = 0

    def visit_Return(self, node: Any) -> None:
        self.found = True

    def visit_Break(self, node: Any) -> None:
        if self.loop_depth == 0:
            self.found = True

    visit_Continue = visit_Break

    def visit_For(self, node: Any) -> None:
        self.loop_depth += 1
        for s in node.body:
            self.visit(s)
        self.loop_depth -= 1
        for s in node.orelse:
            self.visit(s)

    visit_While = visit_For

    def visit_FunctionDef(self, node: Any) -> None:
        pass

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


def _jumps(stmts: List[ast.stmt]) -> bool:
    v = _Jumps()
    for s in stmts:
        v.visit(s)
    return v.found


def _conversion(node: ast.Call) -> bool:
    """``int(x)`` or ``float(x)``: one positional argument, no keywords."""
    return (isinstance(node.func, ast.Name) and node.func.id in ("int", "float") and len(node.args) == 1
            and not node.keywords and not isinstance(node.args[0], ast.Starred))


def _rt(attr: str) -> ast.expr:
    return ast.Attribute(value=ast.Name(id=RT, ctx=ast.Load()), attr=attr, ctx=ast.Load())


def _call(fn: ast.expr, *args: ast.expr) -> ast.Call:
    return ast.Call(func=fn, args=list(args), keywords=[])


def _name(n: str, store: bool = False) -> ast.Name:
    return ast.Name(id=n, ctx=ast.Store() if store else ast.Load())


def _method(obj: str, m: str, *args: ast.expr) -> ast.Call:
    return _call(ast.Attribute(value=_name(obj), attr=m, ctx=ast.Load()), *args)


def _locals() -> ast.Call:
    return _call(_name("locals"))


def _names_tuple(names: List[str]) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _unpack(names: List[str], value: ast.expr) -> ast.stmt:
    node = ast.Assign(targets=[ast.Tuple(elts=[_name(n, True) for n in names], ctx=ast.Store())], value=value)
    node.cl_rebind = True  # type: ignore[attr-defined]  (_Assigned skips it)
    return node


def _if_attr(obj: str, attr: str, body: List[ast.stmt]) -> ast.If:
    return ast.If(test=ast.Attribute(value=_name(obj), attr=attr, ctx=ast.Load()), body=body, orelse=[])


class _Rewriter(ast.NodeTransformer):
    def __init__(self, filename: str, line_offset: int):
        self.filename = filename
        self.offset = line_offset
        self.k = 0
        self.depth = 0  # > 0 inside the function being rewritten (functions defined in it are rewritten too)
        self.fn_locals: set = set()  # the rewritten function's parameters and the names it binds

    def _where(self, node: ast.AST) -> ast.Constant:
        return ast.Constant(f"{self.filename}:{node.lineno + self.offset}")

    def _fresh(self, kind: str) -> str:
        self.k += 1
        return f"__cl_{kind}{self.k}"

    def visit_FunctionDef(self, node: Any) -> Any:
        # a function defined inside the kernel's (a helper the body calls, as CUTLASS's FMHA defines its
        # softmax loop and passes it through functools.partial) is rewritten too, as CuTe DSL's
        # preprocessor rewrites every function of a jit function's body, each with its own locals
        outer = self.fn_locals
        self.depth += 1
        a = node.args
        self.fn_locals = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | set(_assigned(node.body))
        self.fn_locals |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        node.body = self._stmts(node.body)
        self.depth -= 1
        self.fn_locals = outer
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: Any) -> Any:
        return node

    def _stmts(self, stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for s in stmts:
            r = self.visit(s)
            if isinstance(r, list):
                out.extend(r)
            elif r is not None:
                out.append(r)
        return out

    # ---- conditions: and / or / not become helpers that keep Python's short-circuit for static values
    def _cond(self, e: ast.expr) -> ast.expr:
        if isinstance(e, ast.BoolOp):
            vals = [self._cond(v) for v in e.values]
            fn = "and_" if isinstance(e.op, ast.And) else "or_"
            acc = vals[-1]
            for v in reversed(vals[:-1]):
                acc = _call(_rt(fn), v, ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                     kw_defaults=[], defaults=[]), body=acc))
            return acc
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return _call(_rt("not_"), self._cond(e.operand))
        return self.visit(e)  # its comparisons and calls rewritten as anywhere in the body

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        """``a and b`` / ``a or b`` anywhere in the body: the helpers keep Python's short-circuit for
        static values and combine runtime conditions (``x == 0.0 or x != x``) into one."""
        self.generic_visit(node)
        if self.depth == 0:
            return node
        return ast.copy_location(self._cond(node), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        self.generic_visit(node)
        if self.depth == 0 or not isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(self._cond(node), node)

    _SEQ_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}

    def visit_Compare(self, node: ast.Compare) -> Any:
        """``a == b`` / ``!=`` / ``in`` / ``not in`` -> ``seq_cmp(a, b, op)``: lists and tuples holding runtime
        values compare element by element, into one runtime condition, as CuTe DSL's compare executor does
        (control.seq_cmp); everything else compares as Python does."""
        self.generic_visit(node)
        if self.depth == 0 or len(node.ops) != 1 or type(node.ops[0]) not in self._SEQ_OPS:
            return node
        return ast.copy_location(_call(_rt("seq_cmp"), node.left, node.comparators[0],
                                       ast.Constant(self._SEQ_OPS[type(node.ops[0])])), node)

    def visit_Call(self, node: ast.Call) -> Any:
        """``int(x)`` / ``float(x)``: refused for a runtime value, as CuTe DSL refuses it (control.py_conv)."""
        self.generic_visit(node)
        if self.depth > 0 and _conversion(node):
            return ast.copy_location(_call(_rt("py_conv"), node.func, node.args[0], self._where(node)), node)
        if self.depth > 0 and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
            # min/max of runtime values: cutlass.min/max, as CuTe DSL redirects the builtins (control.py_minmax)
            new = ast.Call(func=_rt("py_minmax"), args=[node.func, *node.args], keywords=node.keywords)
            return ast.copy_location(new, node)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        """``A if C else B`` -> ``ifexp(C, lambda: A, lambda: B)`` (a select when C is a runtime value)."""
        self.generic_visit(node)
        if self.depth == 0:
            return node

        def thunk(e: ast.expr) -> ast.Lambda:
            return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                 defaults=[]), body=e)

        return ast.copy_location(_call(_rt("ifexp"), self._cond(node.test), thunk(node.body), thunk(node.orelse)),
                                 node)

    def visit_For(self, node: ast.For) -> Any:
        node.body = self._stmts(node.body)
        node.orelse = self._stmts(node.orelse)
        targets = set(_assigned([ast.Assign(targets=[node.target], value=ast.Constant(0))]))
        names = [n for n in _assigned(node.body) if n not in targets]
        # objects whose methods the body calls (a pipeline state's advance()): a runtime loop carries them when
        # they hold CuTe DSL's value protocol, as the while loop does
        invoked = [n for n in _invoked(node.body, self.fn_locals) if n not in names and n not in targets]
        names = names + invoked
        v = self._fresh("l")
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            it = ast.Call(func=_rt("py_range"), args=[it.func, *it.args], keywords=it.keywords)
        read = {n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        local = [n for n in names if _set_before_read(node.body, n)]  # values of one iteration only
        make = ast.Assign(targets=[_name(v, True)], value=_call(
            _rt("Loop"), it, _names_tuple(names), _call(_rt("grab"), _locals(), _names_tuple(names)),
            self._where(node), ast.Constant(_jumps(node.body)), ast.Constant(not (targets & read)),
            _loop_targets(node.body), _names_tuple(local), _names_tuple(invoked)))
        body = list(node.body)
        if names:
            body = [_if_attr(v, "dynamic", [_unpack(names, _method(v, "enter"))])] + body
            body.append(_if_attr(v, "dynamic", [ast.Expr(_method(v, "leave", _locals()))]))
        loop = ast.For(target=node.target, iter=_name(v), body=body, orelse=node.orelse,
                       type_comment=None)
        out: List[ast.stmt] = [make, loop]
        if names:
            out.append(_if_attr(v, "dynamic", [_unpack(names, _method(v, "exit"))]))
        return [ast.copy_location(s, node) for s in out]

    def visit_If(self, node: ast.If) -> Any:
        node.body = self._stmts(node.body)
        node.orelse = self._stmts(node.orelse)
        names = _assigned(node.body + node.orelse)
        # objects whose methods an arm calls (a pipeline state's advance_iters()): as in CuTe DSL, a runtime
        # branch carries them when they hold its value protocol; each arm works on such objects rebuilt
        # from the branch's registers (Branch.enter)
        invoked = [n for n in _invoked(node.body + node.orelse, self.fn_locals) if n not in names]
        names = names + invoked
        v = self._fresh("b")
        make = ast.Assign(targets=[_name(v, True)], value=_call(
            _rt("Branch"), self._cond(node.test), _names_tuple(names),
            _call(_rt("grab"), _locals(), _names_tuple(names)), self._where(node),
            ast.Constant(_jumps(node.body + node.orelse)), _loop_targets(node.body + node.orelse),
            _names_tuple(invoked)))
        leave = ast.Expr(_method(v, "leave", _locals()))
        enter = [_if_attr(v, "dynamic", [_unpack(names, _method(v, "enter", _locals()))])] if names else []
        out: List[ast.stmt] = [make, ast.If(test=_method(v, "then"), body=enter + node.body + [leave], orelse=[])]
        if node.orelse:
            pre = [_if_attr(v, "dynamic", [_unpack(names, _method(v, "restore"))])] if names else []
            out.append(ast.If(test=_method(v, "orelse"), body=pre + node.orelse + [leave], orelse=[]))
        if names:
            out.append(_if_attr(v, "dynamic", [_unpack(names, _method(v, "exit"))]))
        else:  # the branch still gives objects it changed in place their results (carry_escape)
            out.append(_if_attr(v, "dynamic", [ast.Expr(_method(v, "exit"))]))
        return [ast.copy_location(s, node) for s in out]

    def visit_While(self, node: ast.While) -> Any:
        node.body = self._stmts(node.body)
        node.orelse = self._stmts(node.orelse)
        if node.orelse:
            return node  # while ... else stays Python (its condition must then be static)
        names = _assigned(node.body)
        invoked = [n for n in _invoked(node.body + [node.test], self.fn_locals) if n not in names]
        # values of one iteration only: set before read in the body, and not read by the condition
        local = [n for n in names if not _loads(node.test, n) and _set_before_read(node.body, n)]
        names = names + invoked
        v = self._fresh("w")
        c = self._fresh("c")
        make = ast.Assign(targets=[_name(v, True)], value=_call(
            _rt("WhileLoop"), _names_tuple(names), _call(_rt("grab"), _locals(), _names_tuple(names)),
            self._where(node), ast.Constant(_jumps(node.body)), _names_tuple(invoked), _names_tuple(local),
            _loop_targets(node.body)))
        body: List[ast.stmt] = []
        if names:
            body.append(_if_attr(v, "in_region", [_unpack(names, _method(v, "enter"))]))
        body += [
            ast.Assign(targets=[_name(c, True)], value=self._cond(node.test)),
            ast.If(test=_method(v, "restart", _name(c)), body=[ast.Continue()], orelse=[]),
            ast.If(test=ast.UnaryOp(op=ast.Not(), operand=_method(v, "test", _name(c))), body=[ast.Break()],
                   orelse=[]),
        ]
        body += node.body
        body.append(ast.Expr(_method(v, "leave", _locals())))
        loop = ast.While(test=ast.Constant(True), body=body, orelse=[])
        out: List[ast.stmt] = [make, loop]
        if names:
            out.append(_if_attr(v, "dynamic", [_unpack(names, _method(v, "exit"))]))
        return [ast.copy_location(s, node) for s in out]


def rewrite_source(src: str, filename: str, line_offset: int, freevars: tuple = ()) -> ast.Module:
    """The module AST defining ``__cl_factory(__cl_rt, *freevars)``, which returns the rewritten
    function (the first function definition in src, decorators removed)."""
    tree = ast.parse(src)
    fn = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    fn.decorator_list = []
    fn = _Rewriter(filename, line_offset).visit(fn)
    factory = ast.FunctionDef(
        name="__cl_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=RT)] + [ast.arg(arg=f) for f in freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fn, ast.Return(value=_name(fn.name))], decorator_list=[], returns=None, type_comment=None)
    mod = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(mod)
    ast.increment_lineno(mod, line_offset)
    return mod


def rewrite_function(fn: Callable) -> Optional[Callable]:
    """fn with its control flow rewritten, or None when its source cannot be read."""
    from . import control

    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError):
        return None
    src = textwrap.dedent("".join(lines))
    freevars = fn.__code__.co_freevars
    if "__class__" in freevars:
        return None  # zero-argument super(): keep the original
    try:
        cells = [c.cell_contents for c in (fn.__closure__ or ())]
    except ValueError:
        return None  # a closure variable not bound yet
    mod = rewrite_source(src, filename, first - 1, freevars)
    code = compile(mod, filename, "exec")
    ns: dict = {}
    exec(code, fn.__globals__, ns)
    new = ns["__cl_factory"](control, *cells)
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__cl_rewritten__ = True
    return new


# --------------------------------------------------------------------------- @cute.jit (host) functions

class _HostRewriter(ast.NodeTransformer):
    """In a @cute.jit function's own body: ``for x in range(...)`` / ``cutlass.range(...)`` become
    runtime loops as CuTe DSL makes them (``__cl_host.host_range``: the loop variable is a runtime
    Int32, printed '?'), and ``print`` becomes ``__cl_host.trace_print`` (a trace-time print shows
    once, not once per trip). ``range_constexpr`` loops stay Python loops."""

    def __init__(self, filename: str, line_offset: int):
        self.filename = filename
        self.offset = line_offset
        self.depth = 0
        self.changed = False

    def visit_FunctionDef(self, node: Any) -> Any:
        if self.depth > 0:
            return node
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: Any) -> Any:
        return node

    def visit_ClassDef(self, node: Any) -> Any:
        return node

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        it = node.iter
        if isinstance(it, ast.Call):
            f = it.func
            plain = isinstance(f, ast.Name) and f.id == "range"
            dsl = isinstance(f, ast.Attribute) and f.attr == "range" and isinstance(f.value, ast.Name) \
                and f.value.id == "cutlass"
            if plain or dsl:
                node.iter = ast.Call(func=ast.Attribute(value=_name("__cl_host"), attr="host_range", ctx=ast.Load()),
                                     args=list(it.args), keywords=list(it.keywords))
                self.changed = True
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            node.func = ast.Attribute(value=_name("__cl_host"), attr="trace_print", ctx=ast.Load())
        elif _conversion(node):  # int(x) / float(x): refused for a runtime value (host.py_conv)
            where = ast.Constant(f"{self.filename}:{node.lineno + self.offset}")
            new = ast.Call(func=ast.Attribute(value=_name("__cl_host"), attr="py_conv", ctx=ast.Load()),
                           args=[node.func, node.args[0], where], keywords=[])
            self.changed = True
            return ast.copy_location(new, node)
        return node


def rewrite_traced_function(fn: Callable) -> Callable:
    """A @cute.jit function called inside a kernel's trace, with the kernel's rewrite (runtime
    if/for/while, and/or/not, conditional expressions); fn itself where its source cannot be read."""
    if inspect.ismethod(fn):
        import types

        inner = rewrite_traced_function(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    cached = getattr(fn, "__cl_kernel_rewritten__", None)
    if cached is not None:
        return cached
    if getattr(fn, "__cl_rewritten__", False):
        return fn
    new = rewrite_function(fn) or fn
    try:
        fn.__cl_kernel_rewritten__ = new
    except (AttributeError, TypeError):
        pass
    return new


def rewrite_host_function(fn: Callable) -> Callable:
    """A @cute.jit function with its runtime loops rewritten (see _HostRewriter); fn itself when it
    has none, or when its source cannot be read."""
    if inspect.ismethod(fn):  # @cute.jit on a method: the function rewritten, bound again
        import types

        inner = rewrite_host_function(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    cached = getattr(fn, "__cl_host_rewritten__", None)
    if cached is not None:
        return cached
    new = _rewrite_host(fn) or fn
    try:
        fn.__cl_host_rewritten__ = new
    except (AttributeError, TypeError):
        pass
    return new


def _rewrite_host(fn: Callable) -> Optional[Callable]:
    from . import host

    code = getattr(fn, "__code__", None)
    if code is None or not {"range", "int", "float"} & set(code.co_names):
        return None  # no loop or conversion to rewrite (the common case: nothing parsed)
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError):
        return None
    freevars = code.co_freevars
    if "__class__" in freevars:
        return None
    try:
        cells = [c.cell_contents for c in (fn.__closure__ or ())]
    except ValueError:
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fdef is None:
        return None
    fdef.decorator_list = []
    rw = _HostRewriter(filename, first - 1)
    fdef = rw.visit(fdef)
    if not rw.changed:
        return None
    factory = ast.FunctionDef(
        name="__cl_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg="__cl_host")] + [ast.arg(arg=f) for f in freevars],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(value=_name(fdef.name))], decorator_list=[], returns=None, type_comment=None)
    mod = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(mod)
    ast.increment_lineno(mod, first - 1)
    ns: dict = {}
    exec(compile(mod, filename, "exec"), fn.__globals__, ns)
    new = ns["__cl_factory"](host, *cells)
    new.__defaults__ = fn.__defaults__
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__wrapped_jit__ = fn
    return new
