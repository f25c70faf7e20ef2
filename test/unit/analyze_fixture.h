/*
 * analyze_fixture.h - what the analyzer's end-to-end unit suites (check_analyze.c,
 * check_analyze_inputs.c) share: the events of a benign server and of the scenario (a tool
 * call that makes a shell read a key and phone home), the signed trace they are written to
 * (synth_trace.h), and `analyze` run on it with the default policy.
 */
#ifndef MW_ANALYZE_FIXTURE_H
#define MW_ANALYZE_FIXTURE_H

#include <jansson.h>
#include <stdint.h>

#include "cli_run.h"
#include "synth_trace.h"

#define POLICY	   MW_SOURCE_DIR "/policies/default.yaml"
#define O_WR_CREAT (01 | 0100 | 01000)

/* IPv4 socket addresses: 169.254.169.254:80 (cloud metadata) and 93.184.216.34:443. */
extern const uint8_t sa_metadata[16], sa_web[16];

/* The trace a test writes; analyze_teardown (each test case's fixture) removes it. */
extern struct synth S;

/* What benign servers do all day: none of it is a finding. */
void benign_events(struct synth *s);
/* benign_events, then the scenario's calls (see check_analyze.c scenario_findings). */
void scenario_events(struct synth *s);
/* s's trace `name` of events, signed and finished. */
void make_trace(struct synth *s, const char *name, void (*events)(struct synth *));
/* S's trace `name` of events, analyzed with the default policy as JSON: exit 0, the parsed
 * report (r keeps the run). */
json_t *analyze_json(const char *name, void (*events)(struct synth *), struct cli_result *r);
/* The string at a dotted path of a JSON object ("evidence.path"), NULL if there is none. */
const char *jstr(json_t *o, const char *path);
void analyze_teardown(void);

#endif /* MW_ANALYZE_FIXTURE_H */
