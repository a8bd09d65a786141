// Compiled once per JavaScript environment by to_json.rs, which writes the JSON bytes.
//
// Reading a handler's result through N-API costs several calls per property (keys, lookup,
// type, contents), which made serialisation the largest cost of a JSON response. This walk
// runs as optimised JavaScript instead and leaves only data behind: a tape of numbers (an
// op, with a number's value or a string's length after it) and one string holding every
// key and string value in order. Rust reads both and does the rest: escaping, number
// formatting, commas and brackets. No JSON text is made here. The glue calls this itself for
// a handler's plain object or array (as `serialise`, then `replyTape`); to_json.rs calls it
// for the rest (a Response's body, an event's data).
//
// The rules are JSON.stringify's: toJSON(key) is honoured (Dates become ISO strings), boxed
// primitives are unwrapped, undefined, functions and symbols are left out of objects and are
// null in arrays, non-finite numbers are null; a reference cycle is an error. Unlike
// JSON.stringify, a BigInt is written as the exact integer it is (requests bring integers
// beyond 2^53 as BigInt, so echoing one must work).
(function () {
  // Keep in step with `Op` in to_json.rs.
  const NULL = 0, FALSE = 1, TRUE = 2, NUMBER = 3, STRING = 4, ARRAY = 5, OBJECT = 6, END = 7, KEY = 8, INTEGER = 9;
  const MAX_DEPTH = 256;
  const MAX_KEPT = 1 << 16;
  // Reused between calls (most responses fit; a larger one grows it once).
  let tape = new Float64Array(4096);
  let used = 0;
  let text = '';
  let busy = false;

  function grow(needed) {
    const bigger = new Float64Array(Math.max(tape.length * 2, used + needed));
    bigger.set(tape.subarray(0, used));
    tape = bigger;
  }

  function op(code) {
    if (used === tape.length) grow(1);
    tape[used++] = code;
  }

  function opWith(code, x) {
    if (used + 2 > tape.length) grow(2);
    tape[used++] = code;
    tape[used++] = x;
  }

  // Writes `value`, found under `key` in its holder; false when JSON leaves it out.
  function write(value, key, depth) {
    if (value !== null && (typeof value === 'object' || typeof value === 'bigint') && typeof value.toJSON === 'function') {
      value = value.toJSON(String(key));
    }
    switch (typeof value) {
      case 'string':
        opWith(STRING, value.length);
        text += value;
        return true;
      case 'number':
        if (Number.isFinite(value)) opWith(NUMBER, value);
        else op(NULL);
        return true;
      case 'boolean':
        op(value ? TRUE : FALSE);
        return true;
      case 'bigint': {
        const digits = value.toString();
        opWith(INTEGER, digits.length);
        text += digits;
        return true;
      }
      case 'object':
        break;
      default: // undefined, function, symbol
        return false;
    }
    if (value === null) {
      op(NULL);
      return true;
    }
    if (depth >= MAX_DEPTH) throw new RangeError('nested too deeply (a reference cycle?)');
    if (Array.isArray(value)) {
      op(ARRAY);
      for (let i = 0; i < value.length; i++) {
        if (!write(value[i], i, depth + 1)) op(NULL);
      }
      op(END);
      return true;
    }
    if (value instanceof Number || value instanceof String || value instanceof Boolean) {
      return write(value.valueOf(), key, depth);
    }
    op(OBJECT);
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const name = keys[i];
      const mark = used;
      const textMark = text;
      opWith(KEY, name.length);
      text += name;
      if (!write(value[name], name, depth + 1)) {
        used = mark;
        text = textMark;
      }
    }
    op(END);
    return true;
  }

  // `[tape, used, text]`, or null when JSON has nothing to say (a top-level undefined).
  return function flatten(value) {
    // Only a toJSON() calling into the addon itself could get here twice at once.
    if (busy) throw new Error('a response cannot be serialised from inside toJSON()');
    busy = true;
    used = 0;
    text = '';
    try {
      return write(value, '', 0) ? [tape, used, text] : null;
    } finally {
      busy = false;
      text = '';
      // One huge response should not keep its tape for the life of the process.
      if (tape.length > MAX_KEPT) tape = new Float64Array(4096);
    }
  };
})()
