/**
 * A guide's shell session, read from its markdown as a newcomer reads it: the
 * `sh` blocks' commands in order, each with the answer shown after it in a
 * `# ->` comment. Used by the walkthrough test to run the guides' commands for
 * real and hold their answers to what the guide shows.
 */

export interface GuideCommand {
  /** The command as written (continuation lines and multi-line quotes included). */
  text: string;
  /** The step it belongs to (`# 6. …`), 0 before the first. */
  step: number;
  /** The answer shown after it, without the `# ->` marks; null when none is shown. */
  shown: string | null;
}

/** The `sh` blocks of `markdown`, after the heading `under` when given (up to the next heading of that level). */
export function shellBlocks(markdown: string, under?: string): string[] {
  let text = markdown;
  if (under) {
    const start = markdown.indexOf(`\n${under}\n`);
    if (start < 0) throw new Error(`No heading "${under}"`);
    const level = under.split(" ")[0];
    const next = markdown.indexOf(`\n${level} `, start + under.length + 2);
    text = markdown.slice(start, next < 0 ? undefined : next);
  }
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
}

/** The commands of a block, in order, each with its step and the answer shown after it. */
export function guideCommands(block: string): GuideCommand[] {
  const commands: GuideCommand[] = [];
  let step = 0;
  let pending: string[] = [];
  let showing = false;
  for (const line of block.split("\n")) {
    if (pending.length) {
      pending.push(line);
      if (complete(pending.join("\n"))) {
        commands.push({ text: pending.join("\n"), step, shown: null });
        pending = [];
      }
      continue;
    }
    const stepStart = /^# (\d+)\./.exec(line);
    if (stepStart) {
      step = Number(stepStart[1]);
      showing = false;
    } else if (line.startsWith("# ->")) {
      const last = commands.at(-1)!;
      last.shown = line.slice(4).trim();
      showing = true;
    } else if (line.startsWith("#")) {
      // A continuation of the answer shown, or a comment of the step's prose.
      if (showing) commands.at(-1)!.shown += ` ${line.slice(1).trim()}`;
    } else if (line.trim() !== "") {
      showing = false;
      pending = [line];
      if (complete(line)) {
        commands.push({ text: line, step, shown: null });
        pending = [];
      }
    }
  }
  if (pending.length) throw new Error(`Unfinished command: ${pending.join("\n")}`);
  return commands;
}

/** A command is complete when no quote is left open and its last line does not continue with `\`. */
function complete(text: string): boolean {
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quote === "'") {
      if (char === "'") quote = null;
    } else if (char === "\\") {
      i++;
    } else if (quote === '"') {
      if (char === '"') quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "#" && (i === 0 || /\s/.test(text[i - 1]))) {
      // A trailing comment: the rest of the line is not shell.
      const end = text.indexOf("\n", i);
      if (end < 0) break;
      i = end;
    }
  }
  return quote === null && !text.endsWith("\\");
}

/** An assignment (`NAME=value`) the later commands of the session see. */
export function isAssignment(command: string): boolean {
  return /^[A-Z_][A-Z0-9_]*=/.test(command);
}

/**
 * What a shown answer claims, as checks on the real one: every `"key": value`
 * with a literal value (a string without `...`, a number, true, false, null)
 * must be found somewhere in it, and every other quoted string without `...`
 * must be one of its string values. `...` marks what the guide leaves out.
 */
export function claimsOf(shown: string): { pairs: [string, unknown][]; strings: string[] } {
  const pairs: [string, unknown][] = [];
  const strings: string[] = [];
  const pairPattern = /"([A-Za-z_][A-Za-z0-9_]*)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g;
  const paired = new Set<number>();
  for (const match of shown.matchAll(pairPattern)) {
    paired.add(match.index!);
    const valueAt = match.index! + match[0].length - match[2].length;
    paired.add(valueAt);
    if (!match[2].includes("...")) pairs.push([match[1], JSON.parse(match[2])]);
  }
  for (const match of shown.matchAll(/"((?:[^"\\]|\\.)*)"(\s*:)?/g)) {
    if (match[2] || paired.has(match.index!) || match[1].includes("...")) continue;
    strings.push(JSON.parse(`"${match[1]}"`));
  }
  return { pairs, strings };
}

/** Whether `value` holds `key: expected` at any depth. */
export function holdsPair(value: unknown, key: string, expected: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => holdsPair(item, key, expected));
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  if (key in record && record[key] === expected) return true;
  return Object.values(record).some((item) => holdsPair(item, key, expected));
}

/** Whether `value` holds the string `expected` at any depth. */
export function holdsString(value: unknown, expected: string): boolean {
  if (value === expected) return true;
  if (Array.isArray(value)) return value.some((item) => holdsString(item, expected));
  if (value === null || typeof value !== "object") return false;
  return Object.values(value as Record<string, unknown>).some((item) => holdsString(item, expected));
}
