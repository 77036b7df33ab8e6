// The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), written from the
// published algorithm. It maps inflected and derived English words onto one stem ("searching",
// "searches", "searched" → "search"; "directories" → "directori") so a query and a description
// need not use the same word form. Input is one lower-case ASCII word; anything else (digits,
// non-Latin scripts, words of one or two letters) is returned unchanged.

const isLowerAscii = /^[a-z]+$/;

/** Consonant test of the algorithm: a, e, i, o, u are vowels; y is a vowel after a consonant. */
function isConsonant(word: string, i: number): boolean {
  const c = word.charCodeAt(i);
  if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false;
  if (c === 121) return i === 0 ? true : !isConsonant(word, i - 1);
  return true;
}

/** m of the algorithm: the number of vowel–consonant sequences in word[0, end). */
function measure(word: string, end: number): number {
  let i = 0;
  while (i < end && isConsonant(word, i)) i++;
  let m = 0;
  while (i < end) {
    while (i < end && !isConsonant(word, i)) i++;
    if (i >= end) break;
    while (i < end && isConsonant(word, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(word: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(word, i)) return true;
  return false;
}

function endsWithDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

/** *o of the algorithm: the stem ends consonant–vowel–consonant, the last not w, x or y. */
function endsCvc(word: string, end: number): boolean {
  if (end < 3) return false;
  if (!isConsonant(word, end - 3) || isConsonant(word, end - 2) || !isConsonant(word, end - 1)) return false;
  const last = word[end - 1];
  return last !== 'w' && last !== 'x' && last !== 'y';
}

type Rule = readonly [suffix: string, replacement: string];

/** Replaces the first listed suffix the word ends with, when the rest has measure > minMeasure. */
function replaceSuffix(word: string, rules: readonly Rule[], minMeasure: number): string {
  for (const [suffix, replacement] of rules) {
    if (!word.endsWith(suffix)) continue;
    const stemEnd = word.length - suffix.length;
    return measure(word, stemEnd) > minMeasure ? word.slice(0, stemEnd) + replacement : word;
  }
  return word;
}

const STEP2: readonly Rule[] = [
  ['ational', 'ate'], ['tional', 'tion'], ['enci', 'ence'], ['anci', 'ance'], ['izer', 'ize'], ['bli', 'ble'],
  ['alli', 'al'], ['entli', 'ent'], ['eli', 'e'], ['ousli', 'ous'], ['ization', 'ize'], ['ation', 'ate'],
  ['ator', 'ate'], ['alism', 'al'], ['iveness', 'ive'], ['fulness', 'ful'], ['ousness', 'ous'], ['aliti', 'al'],
  ['iviti', 'ive'], ['biliti', 'ble'], ['logi', 'log'],
];
const STEP3: readonly Rule[] = [['icate', 'ic'], ['ative', ''], ['alize', 'al'], ['iciti', 'ic'], ['ical', 'ic'], ['ful', ''], ['ness', '']];
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize'];

function step1a(word: string): string {
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ies')) return word.slice(0, -2);
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s')) return word.slice(0, -1);
  return word;
}

function step1b(word: string): string {
  if (word.endsWith('eed')) return measure(word, word.length - 3) > 0 ? word.slice(0, -1) : word;
  let stem: string | undefined;
  if (word.endsWith('ed') && hasVowel(word, word.length - 2)) stem = word.slice(0, -2);
  else if (word.endsWith('ing') && hasVowel(word, word.length - 3)) stem = word.slice(0, -3);
  if (stem === undefined) return word;
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsWithDoubleConsonant(stem) && !/[lsz]$/.test(stem)) return stem.slice(0, -1);
  if (measure(stem, stem.length) === 1 && endsCvc(stem, stem.length)) return `${stem}e`;
  return stem;
}

function step1c(word: string): string {
  return word.endsWith('y') && hasVowel(word, word.length - 1) ? `${word.slice(0, -1)}i` : word;
}

function step4(word: string): string {
  // Longest suffix first where two share an ending (ement, ment, ent).
  for (const suffix of STEP4) {
    if (!word.endsWith(suffix)) continue;
    if (suffix === 'ent' && (word.endsWith('ement') || word.endsWith('ment'))) continue;
    if (suffix === 'ment' && word.endsWith('ement')) continue;
    const stemEnd = word.length - suffix.length;
    if (measure(word, stemEnd) <= 1) return word;
    if (suffix === 'ion' && !/[st]$/.test(word.slice(0, stemEnd))) return word;
    return word.slice(0, stemEnd);
  }
  return word;
}

function step5(word: string): string {
  let result = word;
  if (result.endsWith('e')) {
    const m = measure(result, result.length - 1);
    if (m > 1 || (m === 1 && !endsCvc(result, result.length - 1))) result = result.slice(0, -1);
  }
  if (measure(result, result.length) > 1 && endsWithDoubleConsonant(result) && result.endsWith('l')) result = result.slice(0, -1);
  return result;
}

/** Porter stem of one lower-case word. */
export function stem(word: string): string {
  if (word.length <= 2 || !isLowerAscii.test(word)) return word;
  let w = step1a(word);
  w = step1b(w);
  w = step1c(w);
  w = replaceSuffix(w, STEP2, 0);
  w = replaceSuffix(w, STEP3, 0);
  w = step4(w);
  return step5(w);
}
