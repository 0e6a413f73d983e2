/** The entries (non-empty lines) under every `## Breaking` (or `### Breaking`) heading of a changelog. */
export function breakingEntries(changelog: string): Set<string> {
  const entries = new Set<string>();
  let level = 0;
  for (const line of changelog.split(/\r?\n/)) {
    const heading = /^(#+)\s+(.*)$/.exec(line);
    if (heading) {
      const depth = heading[1]!.length;
      if (level > 0 && depth <= level) level = 0;
      if (level === 0 && /^breaking\b/i.test(heading[2]!.trim())) level = depth;
      continue;
    }
    if (level > 0 && line.trim() !== '') entries.add(line.trim());
  }
  return entries;
}

/** Whether the new changelog has a `Breaking` entry the old one had not. */
export const addsBreakingEntry = (oldChangelog: string, newChangelog: string) => {
  const before = breakingEntries(oldChangelog);
  return [...breakingEntries(newChangelog)].some((entry) => !before.has(entry));
};
