import type { SampleCodeProblem } from './sample-problem.js';

const method = (name: string, signature: string, body: string): string =>
  `class Solution:\n    def ${name}(self, ${signature}:\n${body
    .split('\n')
    .map((line) => `        ${line}`)
    .join('\n')}`;

/** LeetCode-style problems: each input holds the arguments as JSON lines; the output is the return value's JSON. */
export const LEETCODE_PROBLEMS: SampleCodeProblem[] = [
  {
    id: 'two-sum',
    fnName: 'twoSum',
    prompt:
      'Given a list of integers nums and an integer target, return the indices [i, j] (i < j) of the two numbers that add up to target. Exactly one answer exists.',
    solution: method(
      'twoSum',
      'nums: List[int], target: int) -> List[int]',
      'seen = {}\nfor j, x in enumerate(nums):\n    if target - x in seen:\n        return [seen[target - x], j]\n    seen[x] = j',
    ),
    inputs: ['[2,7,11,15]\n9', '[3,2,4]\n6', '[3,3]\n6', '[-1,-2,-3,-4,-5]\n-8'],
  },
  {
    id: 'valid-parentheses',
    fnName: 'isValid',
    prompt: 'Given a string s of the characters ()[]{}, return true when every bracket is closed by the matching bracket in the right order.',
    solution: method(
      'isValid',
      's: str) -> bool',
      'pairs = {")": "(", "]": "[", "}": "{"}\nstack = []\nfor ch in s:\n    if ch in pairs:\n        if not stack or stack.pop() != pairs[ch]:\n            return False\n    else:\n        stack.append(ch)\nreturn not stack',
    ),
    inputs: ['"()"', '"()[]{}"', '"(]"', '"([)]"', '"{[]}"'],
  },
  {
    id: 'max-subarray',
    fnName: 'maxSubArray',
    prompt: 'Given a non-empty list of integers, return the largest sum of a contiguous sub-list.',
    solution: method(
      'maxSubArray',
      'nums: List[int]) -> int',
      'best = cur = nums[0]\nfor x in nums[1:]:\n    cur = max(x, cur + x)\n    best = max(best, cur)\nreturn best',
    ),
    inputs: ['[-2,1,-3,4,-1,2,1,-5,4]', '[1]', '[5,4,-1,7,8]', '[-3,-1,-2]'],
  },
  {
    id: 'climb-stairs',
    fnName: 'climbStairs',
    prompt: 'You climb a staircase of n steps, one or two steps at a time. Return the number of distinct ways to reach the top.',
    solution: method('climbStairs', 'n: int) -> int', 'a, b = 1, 1\nfor _ in range(n):\n    a, b = b, a + b\nreturn a'),
    inputs: ['1', '2', '5', '45'],
  },
  {
    id: 'single-number',
    fnName: 'singleNumber',
    prompt: 'Every element of a list appears twice except one. Return that one.',
    solution: method('singleNumber', 'nums: List[int]) -> int', 'result = 0\nfor x in nums:\n    result ^= x\nreturn result'),
    inputs: ['[2,2,1]', '[4,1,2,1,2]', '[1]'],
  },
  {
    id: 'merge-intervals',
    fnName: 'merge',
    prompt: 'Given a list of intervals [start, end], merge all overlapping intervals and return them sorted by start.',
    solution: method(
      'merge',
      'intervals: List[List[int]]) -> List[List[int]]',
      'merged = []\nfor start, end in sorted(intervals):\n    if merged and start <= merged[-1][1]:\n        merged[-1][1] = max(merged[-1][1], end)\n    else:\n        merged.append([start, end])\nreturn merged',
    ),
    inputs: ['[[1,3],[2,6],[8,10],[15,18]]', '[[1,4],[4,5]]', '[[5,7]]'],
  },
  {
    id: 'longest-unique-substring',
    fnName: 'lengthOfLongestSubstring',
    prompt: 'Return the length of the longest substring of s without repeated characters.',
    solution: method(
      'lengthOfLongestSubstring',
      's: str) -> int',
      'last = {}\nstart = best = 0\nfor i, ch in enumerate(s):\n    if last.get(ch, -1) >= start:\n        start = last[ch] + 1\n    last[ch] = i\n    best = max(best, i - start + 1)\nreturn best',
    ),
    inputs: ['"abcabcbb"', '"bbbbb"', '"pwwkew"', '""'],
  },
  {
    id: 'rotate-list',
    fnName: 'rotate',
    prompt: 'Return the list nums rotated to the right by k steps (k >= 0).',
    solution: method('rotate', 'nums: List[int], k: int) -> List[int]', 'k %= len(nums)\nreturn nums[-k:] + nums[:-k] if k else nums'),
    inputs: ['[1,2,3,4,5,6,7]\n3', '[-1,-100,3,99]\n2', '[1]\n5'],
  },
  {
    id: 'majority-element',
    fnName: 'majorityElement',
    prompt: 'Return the element that appears more than half of the time in a list.',
    solution: method('majorityElement', 'nums: List[int]) -> int', 'return Counter(nums).most_common(1)[0][0]'),
    inputs: ['[3,2,3]', '[2,2,1,1,1,2,2]', '[7]'],
  },
  {
    id: 'product-except-self',
    fnName: 'productExceptSelf',
    prompt: 'Return a list whose i-th element is the product of every element of nums except nums[i].',
    solution: method(
      'productExceptSelf',
      'nums: List[int]) -> List[int]',
      'n = len(nums)\nout = [1] * n\nleft = 1\nfor i in range(n):\n    out[i] = left\n    left *= nums[i]\nright = 1\nfor i in reversed(range(n)):\n    out[i] *= right\n    right *= nums[i]\nreturn out',
    ),
    inputs: ['[1,2,3,4]', '[-1,1,0,-3,3]', '[2,3]'],
  },
  {
    id: 'group-anagrams-count',
    fnName: 'countGroups',
    prompt: 'Return how many groups of anagrams a list of words forms.',
    solution: method('countGroups', 'words: List[str]) -> int', 'return len({"".join(sorted(w)) for w in words})'),
    inputs: ['["eat","tea","tan","ate","nat","bat"]', '[""]', '["a","b","ab","ba"]'],
  },
  {
    id: 'pascal-row',
    fnName: 'getRow',
    prompt: "Return row r (0-based) of Pascal's triangle.",
    solution: method(
      'getRow',
      'r: int) -> List[int]',
      'row = [1]\nfor _ in range(r):\n    row = [a + b for a, b in zip([0] + row, row + [0])]\nreturn row',
    ),
    inputs: ['0', '3', '6'],
  },
  {
    id: 'binary-search',
    fnName: 'search',
    prompt: 'Given a sorted list of distinct integers and a target, return its index, or -1 when it is absent.',
    solution: method(
      'search',
      'nums: List[int], target: int) -> int',
      'i = bisect_left(nums, target)\nreturn i if i < len(nums) and nums[i] == target else -1',
    ),
    inputs: ['[-1,0,3,5,9,12]\n9', '[-1,0,3,5,9,12]\n2', '[5]\n5'],
  },
  {
    id: 'sqrt-newton',
    fnName: 'mySqrt',
    prompt: 'Return the square root of a non-negative number x as a float (within 1e-6 relative error).',
    solution: method('mySqrt', 'x: float) -> float', 'return math.sqrt(x)'),
    inputs: ['4', '2', '0.25', '1e10'],
  },
  {
    id: 'top-k-frequent',
    fnName: 'topKFrequent',
    prompt: 'Return the k most frequent elements of nums, most frequent first (ties broken by the smaller value first).',
    solution: method(
      'topKFrequent',
      'nums: List[int], k: int) -> List[int]',
      'counts = Counter(nums)\nreturn sorted(counts, key=lambda x: (-counts[x], x))[:k]',
    ),
    inputs: ['[1,1,1,2,2,3]\n2', '[1]\n1', '[4,4,5,5,6]\n2'],
  },
];
