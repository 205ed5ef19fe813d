// peers_work.js: bench/peers.sh's Node workload: hot.js's hotFunction and warmFunction (required
// from tests/fixtures/hot.js), a fixed amount of work (ITERATIONS, argv[2]) instead of a fixed
// time, started by a line on stdin; prints "work.js: done CPU_US SINK" on stderr, then exits at
// the end of its stdin.
'use strict';
const { hotFunction, warmFunction } = require('../tests/fixtures/hot.js');

const iters = Number(process.argv[2] || 100);
process.stdin.once('data', () => {
	const c0 = process.cpuUsage();
	let sink = 0;
	for (let k = 0; k < iters; k++) {
		sink ^= hotFunction(300000 + (k & 1));
		sink ^= warmFunction(100000);
	}
	const c = process.cpuUsage(c0);
	process.stderr.write(`work.js: done ${c.user + c.system} ${sink}\n`);
	process.stdin.on('end', () => process.exit(0));
});
process.stderr.write(`work.js: pid ${process.pid} ready\n`);
