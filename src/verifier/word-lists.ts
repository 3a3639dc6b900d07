/**
 * Words that carry no value in an answer: units and currencies (after MathQA's list, which
 * AReaL's strip_string uses), and English number words. Single-letter units (m, s, g) are
 * dropped only inside \text{}, since outside it they are variables.
 */
export const UNIT_WORDS: ReadonlySet<string> = new Set(
  (
    'units unit sq square squared cubic cu inches inch feet foot ft yards yard yd miles mile mi ' +
    'meters meter metres metre cm mm km centimeters centimeter millimeters millimeter kilometers ' +
    'kilometer kg grams gram gm mg kilograms kilogram pounds pound lbs lb ounces ounce oz tons ton ' +
    'liters liter litres litre ml gallons gallon quarts quart pints pint cups cup seconds second sec ' +
    'secs minutes minute min mins hours hour hr hrs days day weeks week months month years year yr ' +
    'dollars dollar cents cent usd euros euro rupees rs mph kmph km/h m/s degrees degree deg ' +
    'people persons person students student children kids men women boys girls apples books ' +
    'pages cookies candies marbles stickers eggs points times percent'
  ).split(' '),
);

const ONES =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(' ');
const TENS = 'twenty thirty forty fifty sixty seventy eighty ninety'.split(' ');
const SCALES: Record<string, number> = { hundred: 100, thousand: 1000, million: 1_000_000, billion: 1_000_000_000 };

/** "twenty-one" → 21, "one hundred five" → 105; null unless the whole text is a number in words. */
export function wordsToNumber(text: string): number | null {
  const words = text
    .toLowerCase()
    .replace(/-/g, ' ')
    .replace(/\band\b/g, ' ')
    .trim()
    .split(/\s+/);
  if (words.length === 0 || words[0] === '') return null;
  let total = 0;
  let current = 0;
  for (const word of words) {
    const one = ONES.indexOf(word);
    const ten = TENS.indexOf(word);
    if (one >= 0) current += one;
    else if (ten >= 0) current += (ten + 2) * 10;
    else if (word === 'hundred') current = (current || 1) * 100;
    else if (SCALES[word] !== undefined) {
      total += (current || 1) * SCALES[word]!;
      current = 0;
    } else return null;
  }
  return total + current;
}
