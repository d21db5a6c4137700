/**
 * Says loudly, once per file, that tests needing a program this machine lacks did not run (the caller then defines
 * none of them): a skipped suite must not pass quietly.
 */
export function warnMissingTool(tool: string, tests: string, file: string, install: string): void {
  const line = '!'.repeat(100);
  process.stderr.write(
    `\n${line}\n!!! NO ${tool} FOUND: the ${tests} in ${file} DID NOT RUN.\n!!! Install ${install}.\n${line}\n\n`,
  );
}
