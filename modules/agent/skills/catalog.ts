// skills/catalog: the skills the agent can activate: markdown documents with a
// title line ("# Title"), a "summary:" line and an optional "groups:" line (tool
// groups the skill makes visible), then the body. The firmware ships some
// (skills/builtin); files skills/<name>.md on the storage add more or replace a
// shipped one of the same name. They are read once when the firmware starts, so
// the catalogue (and the system prompt bytes it gives) stays the same until a
// restart; activating a skill changes nothing in it.
//
// Limits: SKILLS_MAX skills, each at most SKILL_DOC_MAX_BYTES; a file that does
// not fit the format is skipped with a log line and left as it is.
import type { Directory } from "util/io";
import { SKILLS_MAX, SKILL_DOC_MAX_BYTES } from "budgets";
import { BUILTIN_SKILLS } from "skills/builtin";
import { decodeText, readWhole } from "util/files";
import { messageOf } from "util/errors";
import { lines as textLines } from "util/text";

export const SKILLS_DIRECTORY = "skills";
const NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export interface Skill {
	name: string;
	title: string;
	summary: string;
	groups: string[];
	/** The whole document. */
	document: string;
	/** "builtin" or "flash". */
	origin: "builtin" | "flash";
}

/** The skill in text, or a phrase saying what is wrong with it. */
export function parseSkill(name: string, text: string, origin: Skill["origin"]): Skill | string {
	if (!NAME.test(name)) return `"${name}" is not a skill name (lowercase letters, digits, _ and -)`;
	const lines = textLines(text);
	const title = /^#\s+(.+)$/.exec(lines[0] ?? "")?.[1]?.trim();
	if (!title) return "its first line is not a \"# Title\"";
	const summary = /^summary:\s*(.+)$/i.exec(lines[1] ?? "")?.[1]?.trim();
	if (!summary) return "its second line is not \"summary: ...\"";
	const groupsLine = /^groups:\s*(.*)$/i.exec(lines[2] ?? "")?.[1];
	const groups = groupsLine === undefined ? [] : groupsLine.split(",").map((g) => g.trim()).filter((g) => g.length > 0);
	return { name, title, summary, groups, document: text, origin };
}

export class SkillCatalog {
	readonly #skills: Skill[];

	/** Builtin skills, then the directory's files (when given); never throws. */
	constructor(directory: Directory | undefined, log: (line: string) => void, builtin: Readonly<Record<string, string>> = BUILTIN_SKILLS) {
		const byName = new Map<string, Skill>();
		for (const [name, text] of Object.entries(builtin)) {
			const skill = parseSkill(name, text, "builtin");
			if (typeof skill === "string") throw new Error(`skills: the shipped skill ${name} is malformed: ${skill}`);
			byName.set(name, skill);
		}
		if (directory) {
			try {
				for (const file of directory.scan()) {
					if (!file.endsWith(".md")) continue;
					const name = file.slice(0, -3);
					if (!byName.has(name) && byName.size >= SKILLS_MAX) {
						log(`skills: ${file} is left out: the firmware takes at most ${SKILLS_MAX} skills`);
						continue;
					}
					const read = readWhole(directory, file, SKILL_DOC_MAX_BYTES);
					if (read.kind !== "ok") {
						if (read.kind === "too_big") log(`skills: ${file} is left out: it has ${read.size} bytes, more than ${SKILL_DOC_MAX_BYTES}`);
						continue;
					}
					const text = decodeText(read.bytes);
					const skill = text === undefined ? "it is not UTF-8 text" : parseSkill(name, text, "flash");
					if (typeof skill === "string") log(`skills: ${file} is left out: ${skill}`);
					else byName.set(name, skill);
				}
			} catch (error) {
				log(`skills: the skills folder cannot be read (${messageOf(error)}); only the shipped skills are offered`);
			}
		}
		this.#skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
	}

	list(): readonly Skill[] {
		return this.#skills;
	}

	find(name: string): Skill | undefined {
		return this.#skills.find((skill) => skill.name === name);
	}

	/** The catalogue as the system prompt shows it: one line per skill, by name. */
	catalogue(): string {
		return [
			"Call activate_skill with a skill's name to get its instructions before doing what it covers:",
			...this.#skills.map((skill) => `- ${skill.name}: ${skill.title}. ${skill.summary}`),
		].join("\n");
	}
}
