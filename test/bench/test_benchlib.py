#!/usr/bin/python3
"""test_benchlib.py - the statistics behind the overhead section's verdicts (CTest
bench.stats): benchlib.median_ci's interval against the binomial coverage computed here from
its definition, and bench_overhead.verdict's three answers. The benchmarks print figures and
are not tests; what they conclude from the figures is tested here."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import median_ci, summary  # noqa: E402
from bench_overhead import verdict  # noqa: E402


def coverage(n, k):
    """P(x(k) <= median <= x(n+1-k)) for a continuous distribution: 1 - 2 P(B(n, 1/2) < k)."""
    return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n


class MedianCI(unittest.TestCase):
    def test_order_statistics(self):
        # (n, k): the largest k whose coverage is at least 95%, from the definition
        for n in range(6, 60):
            k = max(k for k in range(1, n // 2 + 1) if coverage(n, k) >= 0.95)
            xs = [float(i) for i in range(1, n + 1)]
            lo, hi, cov = median_ci(list(reversed(xs)))  # any order
            self.assertEqual((lo, hi), (xs[k - 1], xs[n - k]), n)
            self.assertAlmostEqual(cov, coverage(n, k), places=12)
            self.assertLess(coverage(n, k + 1), 0.95, n)
        self.assertEqual(median_ci([float(i) for i in range(1, 10)])[:2], (2.0, 8.0))
        self.assertEqual(median_ci([float(i) for i in range(1, 26)])[:2], (8.0, 18.0))

    def test_too_few(self):
        for n in range(0, 6):
            self.assertIsNone(median_ci(list(range(n))), n)

    def test_failed_runs_left_out(self):
        self.assertIsNone(median_ci([1.0, None, 2.0, 3.0, None, 4.0, 5.0]))
        self.assertEqual(median_ci([1.0, None, 2, 3, 4, 5, 6])[:2], (1.0, 6))
        s = summary([None, 1.2, 1.1, 1.3, 1.0, 1.4, 1.5])
        self.assertEqual((s["n"], s["min"], s["max"], s["ci95"][:2]), (6, 1.0, 1.5, (1.0, 1.5)))
        self.assertIsNone(summary([None, None]))


class Verdict(unittest.TestCase):
    def test_answers(self):
        self.assertEqual(verdict((1.30, 1.40, 0.96), 1.40), "met")  # at the target is met
        self.assertEqual(verdict((1.42, 1.50, 0.96), 1.40), "missed by 0.020-0.100")
        self.assertEqual(verdict((1.36, 1.45, 0.96), 1.40), "the interval holds the target")
        self.assertIn("too few", verdict(None, 1.40))


if __name__ == "__main__":
    unittest.main(verbosity=2)
