import type { SampleCodeProblem } from './sample-problem.js';

/** Standard input/output problems: each input is the whole stdin of one run. Written for Ratchet. */
export const STDIN_PROBLEMS: SampleCodeProblem[] = [
  {
    id: 'sum-two',
    prompt: 'Read two integers a and b on one line and print a + b.',
    solution: 'a, b = map(int, input().split())\nprint(a + b)',
    inputs: ['1 2\n', '-5 5\n', '1000000000 1000000000\n', '0 0\n', '-7 -8\n'],
  },
  {
    id: 'max-of-list',
    prompt: 'The first line holds n, the second n integers. Print the largest of them.',
    solution: 'n = int(input())\nprint(max(map(int, input().split())))',
    inputs: ['3\n1 9 4\n', '1\n-3\n', '5\n-1 -2 -3 -4 -5\n', '4\n7 7 7 7\n'],
  },
  {
    id: 'reverse-string',
    prompt: 'Read one line and print it reversed.',
    solution: 'print(input()[::-1])',
    inputs: ['hello\n', 'a\n', 'ratchet turns forward\n', 'abba\n'],
  },
  {
    id: 'count-vowels',
    prompt: 'Read one line of lowercase letters and spaces and print how many vowels (a, e, i, o, u) it has.',
    solution: 'print(sum(ch in "aeiou" for ch in input()))',
    inputs: ['hello world\n', 'rhythm\n', 'aeiou\n', 'a quick brown fox\n'],
  },
  {
    id: 'fizzbuzz',
    prompt: 'Read n and print the numbers 1 to n, one per line, with Fizz for multiples of 3, Buzz for multiples of 5 and FizzBuzz for both.',
    solution:
      'n = int(input())\nfor i in range(1, n + 1):\n    print("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i)',
    inputs: ['5\n', '15\n', '1\n'],
  },
  {
    id: 'factorial',
    prompt: 'Read n (0 <= n <= 50) and print n!.',
    solution: 'import math\nprint(math.factorial(int(input())))',
    inputs: ['0\n', '5\n', '20\n', '50\n'],
  },
  {
    id: 'fibonacci',
    prompt: 'Read n (1 <= n <= 90) and print the n-th Fibonacci number, where F(1) = F(2) = 1.',
    solution: 'n = int(input())\na, b = 1, 1\nfor _ in range(n - 1):\n    a, b = b, a + b\nprint(a)',
    inputs: ['1\n', '2\n', '10\n', '90\n'],
  },
  {
    id: 'is-prime',
    prompt: 'Read n (1 <= n <= 10^12) and print YES if it is prime, otherwise NO.',
    solution: 'n = int(input())\nok = n > 1\ni = 2\nwhile i * i <= n and ok:\n    ok = n % i != 0\n    i += 1\nprint("YES" if ok else "NO")',
    inputs: ['1\n', '2\n', '91\n', '97\n', '999999000001\n'],
  },
  {
    id: 'gcd-lcm',
    prompt: 'Read two positive integers and print their greatest common divisor and least common multiple, separated by a space.',
    solution: 'import math\na, b = map(int, input().split())\ng = math.gcd(a, b)\nprint(g, a * b // g)',
    inputs: ['12 18\n', '7 13\n', '100 10\n'],
  },
  {
    id: 'sort-numbers',
    prompt: 'The first line holds n, the second n integers. Print them sorted in non-decreasing order, separated by spaces.',
    solution: 'input()\nprint(*sorted(map(int, input().split())))',
    inputs: ['5\n3 1 2 5 4\n', '1\n42\n', '6\n0 -1 -1 3 2 2\n'],
  },
  {
    id: 'word-count',
    prompt: 'Read one line and print the number of words in it (words are separated by whitespace).',
    solution: 'print(len(input().split()))',
    inputs: ['the quick brown fox\n', 'one\n', '  spaced   out words  \n'],
  },
  {
    id: 'palindrome',
    prompt: 'Read a word and print YES if it reads the same backwards, otherwise NO.',
    solution: 's = input().strip()\nprint("YES" if s == s[::-1] else "NO")',
    inputs: ['level\n', 'ratchet\n', 'a\n', 'abccba\n'],
  },
  {
    id: 'digit-sum',
    prompt: 'Read a non-negative integer with up to 1000 digits and print the sum of its digits.',
    solution: 'print(sum(map(int, input().strip())))',
    inputs: ['0\n', '12345\n', '999999999999\n'],
  },
  {
    id: 'average',
    prompt: 'The first line holds n, the second n integers. Print their average with exactly 3 digits after the decimal point.',
    solution: 'n = int(input())\nprint(f"{sum(map(int, input().split())) / n:.3f}")',
    inputs: ['3\n1 2 4\n', '1\n5\n', '4\n-1 1 -1 2\n'],
  },
  {
    id: 'triangle',
    prompt: 'Read n and print a right triangle of stars: line i holds i stars.',
    solution: 'for i in range(1, int(input()) + 1):\n    print("*" * i)',
    inputs: ['1\n', '3\n', '5\n'],
  },
  {
    id: 'binary',
    prompt: 'Read a non-negative integer and print it in binary, without leading zeros.',
    solution: 'print(bin(int(input()))[2:])',
    inputs: ['0\n', '5\n', '1024\n', '255\n'],
  },
  {
    id: 'second-largest',
    prompt: 'The first line holds n, the second n integers with at least two distinct values. Print the second largest distinct value.',
    solution: 'input()\nprint(sorted(set(map(int, input().split())))[-2])',
    inputs: ['4\n1 2 3 4\n', '5\n5 5 4 4 3\n', '2\n-1 -2\n'],
  },
  {
    id: 'matrix-sum',
    prompt: 'The first line holds r and c, then r lines of c integers. Print the sum of each row, one per line.',
    solution: 'r, c = map(int, input().split())\nfor _ in range(r):\n    print(sum(map(int, input().split())))',
    inputs: ['2 3\n1 2 3\n4 5 6\n', '1 1\n-9\n', '3 2\n1 1\n2 2\n3 3\n'],
  },
  {
    id: 'anagram',
    prompt: 'Read two words on two lines and print YES if one is an anagram of the other, otherwise NO.',
    solution: 'print("YES" if sorted(input().strip()) == sorted(input().strip()) else "NO")',
    inputs: ['listen\nsilent\n', 'apple\npaple\n', 'abc\nabd\n'],
  },
  {
    id: 'collatz',
    prompt: 'Read n >= 1 and print how many steps the Collatz process (n -> n/2 if even, 3n+1 if odd) takes to reach 1.',
    solution: 'n = int(input())\nsteps = 0\nwhile n != 1:\n    n = n // 2 if n % 2 == 0 else 3 * n + 1\n    steps += 1\nprint(steps)',
    inputs: ['1\n', '6\n', '27\n'],
  },
  {
    id: 'caesar',
    prompt:
      'Read k and a line of lowercase letters and spaces; print the line with each letter shifted k places forward in the alphabet (wrapping around).',
    solution: 'k = int(input())\nprint("".join(chr((ord(c) - 97 + k) % 26 + 97) if c.isalpha() else c for c in input()))',
    inputs: ['3\nabc xyz\n', '0\nhello\n', '25\nb\n'],
  },
  {
    id: 'running-sum',
    prompt: 'The first line holds n, the second n integers. Print their running sums, separated by spaces.',
    solution: 'import itertools\ninput()\nprint(*itertools.accumulate(map(int, input().split())))',
    inputs: ['4\n1 2 3 4\n', '1\n7\n', '3\n-1 1 -1\n'],
  },
  {
    id: 'char-frequency',
    prompt: 'Read a word and print each distinct letter with its count, in alphabetical order, one "letter count" pair per line.',
    solution: 'from collections import Counter\nfor ch, n in sorted(Counter(input().strip()).items()):\n    print(ch, n)',
    inputs: ['banana\n', 'a\n', 'mississippi\n'],
  },
  {
    id: 'leap-year',
    prompt: 'Read a year and print YES if it is a leap year in the Gregorian calendar, otherwise NO.',
    solution: 'y = int(input())\nprint("YES" if y % 4 == 0 and (y % 100 != 0 or y % 400 == 0) else "NO")',
    inputs: ['2000\n', '1900\n', '2024\n', '2023\n'],
  },
  {
    id: 'circle-area',
    prompt: 'Read a radius r and print the area of the circle with 6 digits after the decimal point.',
    solution: 'import math\nprint(f"{math.pi * float(input()) ** 2:.6f}")',
    inputs: ['1\n', '2.5\n', '0\n'],
  },
];
