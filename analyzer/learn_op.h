/*
 * learn_op.h - how a baseline classes each operation: the same classes decide what
 * learn_read.c learns and which drift rule of the generated policy tests it (learn_emit.c), so
 * the two cannot disagree.
 */
#ifndef MW_LEARN_OP_H
#define MW_LEARN_OP_H

enum lop_class {
	LOP_SKIP = 0, /* not behaviour: fork, exit, the MCP channel, operations this analyzer
		       * does not know (a policy cannot name them) */
	LOP_EXEC,     /* exec: the program and its argv shape */
	LOP_OPEN,     /* every open: read or write by the path */
	LOP_CHANGE,   /* the other file operations: by operation and path */
	LOP_NET,      /* connect and the sends: by destination */
	LOP_BIND,     /* bind: by port */
	LOP_OTHER,    /* everything else (privilege, evasion, chdir, socket, listen...): by name */
};

/* The class of an operation number (enum mw_op). */
enum lop_class learn_op_class(int op);

#endif /* MW_LEARN_OP_H */
