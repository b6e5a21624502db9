/* The flop-class calculator: walks kb's exact expression tree with exact rationals.
 *
 * The page embeds the record's targets as JSON data (kb/sitegen/calculator.py):
 * each target's expression is kb's exact tree (kb/equations/exact.py):
 *   ["n", "p/q"] ["s", name] ["+", ...] ["*", ...] ["^", a, b]
 *   ["max"|"min", ...] ["floor", a] ["ceil", a] (+ "sqrt" "log" "exp", in floating point)
 * Nothing is evaluated from text: no eval, no new Function, no innerHTML. Values
 * are BigInt fractions, so an exact tree gives the very number `kb calc` gives.
 * window.kbCalc.evaluate(targetId, {name: [text, unit]}) is the same path the
 * form uses (the browser tests call it).
 */
(function () {
  "use strict";

  var MAX_POWER = 64n;
  var MAX_BITS = 65536;
  var MAX_EXPONENT = 400; // 1e400 is a 400-digit integer; larger typed exponents are refused

  function CalcError(message, trail) { this.message = message; this.trail = trail || []; }

  // ---- exact rationals ------------------------------------------------------------
  function abs(n) { return n < 0n ? -n : n; }
  function gcd(a, b) { a = abs(a); b = abs(b); while (b) { var t = a % b; a = b; b = t; } return a; }
  function frac(p, q) {
    if (q === undefined) q = 1n;
    if (q === 0n) throw new CalcError("division by zero");
    if (q < 0n) { p = -p; q = -q; }
    var g = gcd(p, q) || 1n;
    return { p: p / g, q: q / g };
  }
  function isExact(x) { return typeof x === "object"; }
  function toFloat(x) { return isExact(x) ? ratioFloat(x.p, x.q) : x; }
  function ratioFloat(p, q) {
    // Number(p)/Number(q) loses everything for big operands; scale both to ~17 digits first.
    var shift = Math.max(abs(p).toString().length, q.toString().length) - 300;
    if (shift > 0) { var s = 10n ** BigInt(shift); return Number(p / s) / Number(q / s); }
    return Number(p) / Number(q);
  }
  function parseFraction(text) {
    var parts = String(text).split("/");
    return frac(BigInt(parts[0]), parts.length > 1 ? BigInt(parts[1]) : 1n);
  }
  function parseDecimal(text) {
    var m = /^\s*([-+]?)(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?\s*$/.exec(text);
    if (!m || (m[2] + (m[3] || "")) === "") throw new CalcError("'" + text + "' is not a number");
    var digits = m[2] + (m[3] || ""), exponent = (m[4] ? parseInt(m[4], 10) : 0) - (m[3] || "").length;
    if (Math.abs(exponent) > MAX_EXPONENT) throw new CalcError("'" + text + "' is too large or small");
    var p = BigInt(digits || "0") * (m[1] === "-" ? -1n : 1n);
    return exponent >= 0 ? frac(p * 10n ** BigInt(exponent)) : frac(p, 10n ** BigInt(-exponent));
  }
  function add(a, b) {
    if (isExact(a) && isExact(b)) return frac(a.p * b.q + b.p * a.q, a.q * b.q);
    return toFloat(a) + toFloat(b);
  }
  function mul(a, b) {
    if (isExact(a) && isExact(b)) return frac(a.p * b.p, a.q * b.q);
    return toFloat(a) * toFloat(b);
  }
  function compare(a, b) {
    if (isExact(a) && isExact(b)) { var d = a.p * b.q - b.p * a.q; return d < 0n ? -1 : d > 0n ? 1 : 0; }
    var x = toFloat(a), y = toFloat(b); return x < y ? -1 : x > y ? 1 : 0;
  }
  function bits(n) { return abs(n).toString(2).length; }
  function power(base, exponent) {
    if (isExact(base) && isExact(exponent) && exponent.q === 1n) {
      var e = exponent.p, size = Math.max(bits(base.p), bits(base.q), 1);
      if (abs(e) > MAX_POWER && Number(abs(e)) * size > MAX_BITS) throw new CalcError("power too large");
      if (base.p === 0n && e < 0n) throw new CalcError("division by zero");
      return e >= 0n ? frac(base.p ** e, base.q ** e) : frac(base.q ** -e, base.p ** -e);
    }
    var value = Math.pow(toFloat(base), toFloat(exponent));
    if (!isFinite(value)) throw new CalcError("not a finite real number");
    return value;
  }
  function floorOf(x) {
    if (!isExact(x)) return frac(BigInt(Math.floor(x)));
    var f = x.p / x.q; if (x.p < 0n && f * x.q !== x.p) f -= 1n; return frac(f);
  }
  function ceilOf(x) { var f = floorOf(x); return compare(f, x) === 0 ? f : add(f, frac(1n)); }
  function real(fn, x) {
    var v = fn(toFloat(x)); if (!isFinite(v)) throw new CalcError("not a finite real number"); return v;
  }

  function evaluate(node, values) {
    var op = node[0], args = node.slice(1), i, acc;
    if (op === "n") return parseFraction(node[1]);
    if (op === "s") {
      if (!Object.prototype.hasOwnProperty.call(values, node[1])) throw new CalcError(node[1] + " is not set");
      return values[node[1]];
    }
    var vals = [];
    for (i = 0; i < args.length; i++) vals.push(evaluate(args[i], values));
    if (op === "+") { acc = frac(0n); for (i = 0; i < vals.length; i++) acc = add(acc, vals[i]); return acc; }
    if (op === "*") { acc = frac(1n); for (i = 0; i < vals.length; i++) acc = mul(acc, vals[i]); return acc; }
    if (op === "^") return power(vals[0], vals[1]);
    if (op === "max" || op === "min") {
      acc = vals[0];
      for (i = 1; i < vals.length; i++) {
        var c = compare(vals[i], acc); if ((op === "max" && c > 0) || (op === "min" && c < 0)) acc = vals[i];
      }
      return acc;
    }
    if (op === "floor") return floorOf(vals[0]);
    if (op === "ceil") return ceilOf(vals[0]);
    if (op === "sqrt") return real(Math.sqrt, vals[0]);
    if (op === "exp") return real(Math.exp, vals[0]);
    if (op === "log") {
      var ln = real(Math.log, vals[0]);
      return vals.length > 1 ? ln / real(Math.log, vals[1]) : ln;
    }
    throw new CalcError("unknown operation " + op);
  }

  // ---- display --------------------------------------------------------------------
  function significant(x, digits) {
    // x as a decimal with `digits` significant digits, trailing zeros dropped (kb's `number`).
    if (!isExact(x)) return String(Number(x.toPrecision(digits)));
    if (x.p === 0n) return "0";
    var sign = x.p < 0n ? "-" : "", p = abs(x.p), q = x.q;
    var e = p.toString().length - q.toString().length;
    if (p * (e >= 0 ? 1n : 10n ** BigInt(-e)) < q * (e >= 0 ? 10n ** BigInt(e) : 1n)) e -= 1;
    var shift = digits - 1 - e, num = p, den = q;
    if (shift >= 0) num *= 10n ** BigInt(shift); else den *= 10n ** BigInt(-shift);
    var n = num / den, r = num % den;
    if (2n * r > den || (2n * r === den && n % 2n === 1n)) n += 1n; // half to even
    var text = n.toString();
    if (shift > 0) {
      while (text.length <= shift) text = "0" + text;
      text = text.slice(0, text.length - shift) + "." + text.slice(text.length - shift);
      text = text.replace(/0+$/, "").replace(/\.$/, "");
    } else if (shift < 0) {
      text += "0".repeat(-shift);
    }
    return sign + text;
  }
  function inUnit(base, factor) { return isExact(base) ? mul(base, invert(parseFraction(factor))) : base / toFloat(parseFraction(factor)); }
  function invert(x) { return frac(x.q, x.p); }
  function withUnit(text, unit) { return unit === "1" ? text : text + " " + unit; }
  function readable(base, target, scales, digits) {
    var steps = scales[target.dims];
    if (steps) {
      for (var i = 0; i < steps.length; i++) {
        var f = parseFraction(steps[i][0]);
        if (compare(isExact(base) ? frac(abs(base.p), base.q) : Math.abs(base), f) >= 0 || i === steps.length - 1) {
          return significant(inUnit(base, steps[i][0]), digits) + " " + steps[i][1];
        }
      }
    }
    return withUnit(significant(inUnit(base, target.factor), digits), target.unit);
  }

  // kb's number_text: an integer as itself, a fraction as `3318.4478 (exact 222336/67)`.
  function numberText(x) {
    if (!isExact(x)) return significant(x, 8);
    return x.q === 1n ? x.p.toString() : significant(x, 8) + " (exact " + x.p + "/" + x.q + ")";
  }

  function symbolsOf(node, found) {
    if (node[0] === "s") found[node[1]] = true;
    else if (node[0] !== "n") node.slice(1).forEach(function (a) { symbolsOf(a, found); });
    return found;
  }

  // The class's validity conditions at these values, as kb calc judges them
  // (kb/equations/validity.py): violated ones refuse the result with their reason.
  function judge(target, values) {
    var violated = [], trail = [];
    (target.validity || []).forEach(function (c) {
      if (c.error) { trail.push("  validity " + c.id + " not checked: " + c.error); return; }
      var needed = symbolsOf(c.left, {});
      c.bounds.forEach(function (b) { symbolsOf(b.tree, needed); });
      var lacking = Object.keys(needed).filter(function (n) {
        return !Object.prototype.hasOwnProperty.call(values, n);
      }).sort();
      if (lacking.length) { trail.push("  validity " + c.id + " not checked: " + lacking.join(", ") + " not set"); return; }
      var lhs, out = null;
      try {
        lhs = evaluate(c.left, values);
        c.bounds.forEach(function (b) {
          if (out) return;
          var rhs = evaluate(b.tree, values), order = compare(lhs, rhs);
          var holds = b.op === ">=" ? order >= 0 : b.op === "<=" ? order <= 0 : order > 0;
          if (holds) return;
          var value = numberText(rhs), bound = b.text.trim() === value ? value : b.text + " = " + value;
          out = "outside validity " + c.id + ": " + c.expr + " = " + numberText(lhs) + ", needs " +
            b.op + " " + bound + "; " + c.reason;
        });
      } catch (e) {
        if (!(e instanceof CalcError)) throw e;
        trail.push("  validity " + c.id + " not checked: no value here"); return;
      }
      if (out) violated.push(out); else trail.push("  validity " + c.id + " holds");
    });
    return { violated: violated, trail: trail };
  }

  // ---- one evaluation, as kb calc prints it ----------------------------------------
  function run(data, target, inputs) {
    var trail = [target.symbol + " = " + target.equation], values = {};
    if (target.expanded) trail.push("  = " + target.expanded);
    var negative = [];
    target.inputs.concat(target.optional || []).forEach(function (name) {
      var given = inputs[name], symbol = data.symbols[name], base, shown, origin;
      var optional = target.inputs.indexOf(name) < 0;
      if (!given && optional) return;  // only a validity condition reads it: left unchecked
      if (!given) throw new CalcError(name + " is not set: type a value or pick one from the knowledge base");
      if (given.key) {
        var v = data.values[given.key];
        base = parseFraction(v.base); shown = v.shown; origin = "picked: " + given.key;
      } else if (given.base) {
        base = parseFraction(given.base); shown = given.shown; origin = given.origin;
      } else {
        var factor = unitFactor(symbol, given.unit);
        base = mul(parseDecimal(given.text), parseFraction(factor));
        shown = withUnit(given.text.trim(), given.unit); origin = "typed";
      }
      values[name] = base;
      if (compare(base, frac(0n)) < 0) negative.push(name + " = " + shown);
      // As kb calc: no conversion when the value is written in the declared unit already.
      var inDeclared = inUnit(base, symbol.factor);
      var number = isExact(inDeclared) && inDeclared.q === 1n ? inDeclared.p.toString() : significant(inDeclared, 8);
      var same = shown.split(" ").pop() === symbol.unit || shown === number;
      var converted = same ? "" : " = " + withUnit(number, symbol.unit);
      trail.push("  " + name + " = " + shown + converted + "   (" + origin + ")" +
        (optional ? "   (read only by a validity condition)" : ""));
    });
    var result = null, reason = "";
    try {
      result = evaluate(target.tree, values);
    } catch (e) {
      if (!(e instanceof CalcError)) throw e;
      reason = target.symbol + " has no value at these inputs: " + e.message +
        "; the equation does not cover these inputs";
    }
    var judged = judge(target, result === null ? values : withResult(values, target.symbol, result));
    if (result === null) throw new CalcError(judged.violated.concat([reason]).join("; "), trail);
    if (judged.violated.length) {
      throw new CalcError(target.symbol + " = " + numberText(result) + ": " + judged.violated.join("; "), trail);
    }
    if (negative.length) {
      throw new CalcError(negative.join(", ") + ": negative; kb declares every symbol a positive " +
        "quantity (a size, a rate, a time, a count), so this class's equations do not cover it", trail);
    }
    trail = trail.concat(judged.trail);
    var digits = data.digits || 4;
    var value = inUnit(result, target.factor);
    var exactText = isExact(value) ? (value.q === 1n ? value.p.toString() : value.p + "/" + value.q) : "";
    var shownResult = readable(result, { dims: dimsOf(data, target), factor: target.factor, unit: target.unit }, data.scales, digits);
    var exactNote = exactText && exactText !== significant(value, digits) ? " (exact " + withUnit(exactText, target.unit) + ")" : "";
    trail.push(target.symbol + " = " + shownResult + exactNote);
    return { trail: trail, exact: exactText, value: toFloat(value), unit: target.unit, shown: shownResult };
  }
  function withResult(values, name, result) {
    var out = {};
    Object.keys(values).forEach(function (k) { out[k] = values[k]; });
    out[name] = result;
    return out;
  }
  function dimsOf(data, target) { return target.dims || (data.symbols[target.symbol] || {}).dims || ""; }
  function unitFactor(symbol, unit) {
    for (var i = 0; i < symbol.units.length; i++) if (symbol.units[i][0] === unit) return symbol.units[i][1];
    throw new CalcError("unit '" + unit + "' is not a unit of " + symbol.unit);
  }
  function findTarget(data, id) {
    for (var i = 0; i < data.targets.length; i++) if (data.targets[i].id === id) return data.targets[i];
    throw new CalcError("no equation " + id);
  }

  // ---- the form -------------------------------------------------------------------
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function Form(root, data) {
    this.root = root; this.data = data; this.state = {};
    this.fields = root.querySelector(".calc-fields");
    this.targetSelect = root.querySelector(".calc-target");
    this.output = root.querySelector(".calc-result");
    this.trail = root.querySelector(".calc-trail");
    var self = this;
    fillPickers(root, data);
    this.targetSelect.addEventListener("change", function () { self.build(); });
    root.querySelectorAll(".calc-picker").forEach(function (select) {
      select.addEventListener("change", function () { self.pick(select); });
    });
    root.hidden = false;
    this.build();
  }
  Form.prototype.target = function () { return findTarget(this.data, this.targetSelect.value); };
  Form.prototype.build = function () {
    var self = this, target = this.target();
    while (this.fields.firstChild) this.fields.removeChild(this.fields.firstChild);
    target.inputs.concat(target.optional || []).forEach(function (name) {
      if (!self.state[name] && target.defaults[name]) {
        var d = target.defaults[name];
        self.state[name] = { base: d.base, shown: d.shown, origin: d.origin };
      }
      self.fields.appendChild(self.row(name));
    });
    this.compute();
  };
  Form.prototype.row = function (name) {
    var self = this, symbol = this.data.symbols[name], id = "calc-" + name;
    var given = this.state[name] || {};
    var row = el("div", { class: "calc-row" });
    var label = el("label", { for: id + "-v" });
    label.appendChild(el("code", {}, name));
    label.appendChild(document.createTextNode(" " + symbol.meaning));
    if ((this.target().optional || []).indexOf(name) >= 0) {
      label.appendChild(el("span", { class: "muted" }, " (optional: only a validity condition reads it)"));
    }
    row.appendChild(label);
    var box = el("span", { class: "calc-value" });
    var input = el("input", { id: id + "-v", type: "text", inputmode: "decimal", autocomplete: "off",
      "aria-describedby": id + "-src" });
    var base = given.key ? this.data.values[given.key].base : given.base;
    input.value = given.text !== undefined ? given.text : base ? significant(inUnit(parseFraction(base), symbol.factor), 12) : "";
    box.appendChild(input);
    var unit = el("select", { id: id + "-u", "aria-label": name + " unit" });
    symbol.units.forEach(function (u) { unit.appendChild(el("option", { value: u[0] }, u[0])); });
    unit.value = given.unit || symbol.unit;
    if (symbol.units.length < 2) unit.hidden = true;
    box.appendChild(unit);
    row.appendChild(box);
    var source = el("select", { id: id + "-k", "aria-label": name + " from the knowledge base" });
    source.appendChild(el("option", { value: "" }, given.origin && !given.key ? "the claim's value" : "typed value"));
    symbol.options.forEach(function (key) {
      var v = self.data.values[key];
      source.appendChild(el("option", { value: key }, v.title + " · " + v.field + " = " + v.shown));
    });
    source.value = given.key || "";
    row.appendChild(source);
    row.appendChild(el("span", { id: id + "-src", class: "calc-src" }, given.key ? "from " + given.key : given.origin || ""));
    function typed() {
      self.state[name] = input.value.trim() === "" ? null : { text: input.value, unit: unit.value };
      source.value = "";
      row.querySelector(".calc-src").textContent = "typed";
      self.compute();
    }
    input.addEventListener("input", typed);
    unit.addEventListener("change", typed);
    source.addEventListener("change", function () {
      if (!source.value) return;
      self.state[name] = { key: source.value };
      var v = self.data.values[source.value];
      input.value = significant(inUnit(parseFraction(v.base), symbol.factor), 12);
      unit.value = symbol.unit;
      row.querySelector(".calc-src").textContent = "from " + source.value;
      self.compute();
    });
    return row;
  };
  Form.prototype.pick = function (select) {
    var self = this, picker = null;
    this.data.pickers.forEach(function (p) { if (p.kind === select.getAttribute("data-kind")) picker = p; });
    if (!picker || !select.value) return;
    picker.records.forEach(function (r) {
      if (r.id !== select.value) return;
      Object.keys(r.sets).forEach(function (name) { self.state[name] = { key: r.sets[name] }; });
    });
    this.build();
  };
  Form.prototype.compute = function () {
    var target = this.target();
    try {
      var result = run(this.data, target, this.state);
      this.output.textContent = target.symbol + " = " + result.shown;
      this.output.classList.remove("calc-refused");
      this.output.setAttribute("data-exact", result.exact);
      this.output.setAttribute("data-value", String(result.value));
      this.trail.textContent = result.trail.join("\n");
    } catch (e) {
      if (!(e instanceof CalcError)) throw e;
      this.output.textContent = "Not computed: " + e.message;
      this.output.classList.add("calc-refused");
      this.output.setAttribute("data-exact", "");
      this.output.setAttribute("data-value", "");
      this.trail.textContent = e.trail.concat(["refused: " + e.message]).join("\n");
    }
  };

  // ---- the pickers: every record of the site's shared file (calc-records.js) ----------
  // Each symbol lists the [kind, field]s its claims bind it to; every record of that kind
  // with that field in the symbol's dimension is an option, and a picker sets each symbol
  // the chosen record has an option for.
  function hydrate(data, shared) {
    var records = (shared && shared.records) || {}, values = {}, byKind = {};
    Object.keys(data.symbols).sort().forEach(function (name) {
      var symbol = data.symbols[name];
      symbol.options = [];
      (symbol.fields || []).forEach(function (pair) {
        var kind = pair[0], field = pair[1];
        (records[kind] || []).forEach(function (row) {
          var own = Object.prototype.hasOwnProperty.call(row[2], field);
          var v = own ? row[2][field] : null, key = row[0] + "#" + field;
          if (!v || v[2] !== symbol.dims || symbol.options.indexOf(key) >= 0) return;
          values[key] = { base: v[0], shown: v[1], title: row[1], kind: kind, field: field };
          symbol.options.push(key);
          var kindRecords = byKind[kind] = byKind[kind] || { order: [], byId: {} };
          if (!kindRecords.byId[row[0]]) { kindRecords.byId[row[0]] = { id: row[0], title: row[1], sets: {} }; kindRecords.order.push(row[0]); }
          if (!kindRecords.byId[row[0]].sets[name]) kindRecords.byId[row[0]].sets[name] = key;
        });
      });
    });
    data.values = values;
    data.pickers.forEach(function (picker) {
      var found = byKind[picker.kind] || { order: [], byId: {} };
      picker.records = found.order.map(function (id) { return found.byId[id]; });
    });
    return data;
  }
  function fillPickers(root, data) {
    root.querySelectorAll(".calc-picker").forEach(function (select) {
      data.pickers.forEach(function (picker) {
        if (picker.kind !== select.getAttribute("data-kind")) return;
        picker.records.forEach(function (r) { select.appendChild(el("option", { value: r.id }, r.title)); });
        if (!picker.records.length) select.parentNode.hidden = true;
      });
    });
  }

  function dataOf(root) {
    var script = document.getElementById(root.getAttribute("data-calc"));
    return hydrate(JSON.parse(script.textContent), window.KB_CALC_RECORDS);
  }

  window.kbCalc = {
    evaluate: function (targetId, inputs) {
      var root = document.querySelector("[data-calc]"), data = dataOf(root), given = {};
      Object.keys(inputs).forEach(function (name) { given[name] = { text: inputs[name][0], unit: inputs[name][1] }; });
      try {
        return run(data, findTarget(data, targetId), given);
      } catch (e) {
        if (e instanceof CalcError) return { error: e.message };
        throw e;
      }
    }
  };
  document.querySelectorAll("[data-calc]").forEach(function (root) { new Form(root, dataOf(root)); });
})();
