import { compareShapes } from './compare-shapes.js';
import type { Match } from './match.js';
import { answerKey, normaliseAnswer } from './normalise.js';
import { parseShape } from './shape.js';
import { percentOnlyPredicted } from './scalar.js';
import { compareChoices, compareTexts } from './text-answers.js';

/** Whether a predicted answer states the gold answer: normalise, then compare by kind. */
export function answersEqual(goldAnswer: string, predictedAnswer: string): Match {
  const gold = normaliseAnswer(goldAnswer);
  const pred = normaliseAnswer(predictedAnswer);
  if (gold.text === '' || pred.text === '') return { equal: false, rule: 'empty' };
  const percentShifted = percentOnlyPredicted({ latex: gold.text, percent: gold.percent }, { latex: pred.text, percent: pred.percent });
  if (answerKey(gold.text) === answerKey(pred.text) && !percentShifted) return { equal: true, rule: 'string' };
  const choice = compareChoices(gold.text, pred.text);
  if (choice) return choice;
  const text = compareTexts(gold.text, pred.text);
  if (text) return text;
  const [goldText, predText] = decimalCommaReading(gold.text, pred.text);
  return compareShapes(parseShape(goldText), parseShape(predText), { gold: gold.percent, pred: pred.percent });
}

/**
 * Decimal-comma policy: `1,22` against a single plain number on the other side reads as 1.22.
 * A comma before exactly three digits was already taken as a thousands separator, and a comma
 * followed by a space (`3, 4`) is a list.
 */
function decimalCommaReading(gold: string, pred: string): [string, string] {
  const commaNumber = /^-?\d+,\d+$/;
  const plainNumber = /^-?\d*\.?\d+$/;
  if (commaNumber.test(gold) && plainNumber.test(pred)) return [gold.replace(',', '.'), pred];
  if (commaNumber.test(pred) && plainNumber.test(gold)) return [gold, pred.replace(',', '.')];
  return [gold, pred];
}
