// The files the chat scenarios read, written under a fresh directory: the shared test fixtures (a 120-line text
// file, a notebook with one plot, a 4-page PDF, a file outside the workspace) plus the large ones the reply
// limit is about: a 5,000-line text file, a 300-page PDF with a page of text on each page, a notebook of 50
// plots, three small files for a read of many, a key file, and files in two folders outside the workspace.

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const require = createRequire(import.meta.url);

export const BIG_TEXT_LINES = 5000;
export const LONG_PDF_PAGES = 300;
export const LONG_PDF_LINES_PER_PAGE = 40;
export const PLOT_CELLS = 50;

/** The small files of the read of many, by workspace-relative path. */
export const MANY_FILES = {
  'src/alpha.py': 'def alpha():\n    return "alpha marker 1f3a"\n',
  'src/beta.py': 'from alpha import alpha\n\n\ndef beta():\n    return alpha() + " beta marker 9c2e"\n',
  'config.toml': '[settings]\nname = "gamma marker 47bd"\nlevel = 3\n',
};

/** What a secret in the consent scenarios' files holds: it must never reach the model unless the user allowed it. */
export const SECRETS = {
  env: 'not-a-real-token',
  key: 'DEPLOY-KEY-5e1f',
};

/** The files outside the workspace the consent scenarios read, by name: two folders, two files each. */
export const OUTSIDE_FILES = {
  notes: ['outside', 'notes.txt', 'a note kept outside the workspace'],
  second: ['outside', 'second.txt', 'a second note outside 7a2c'],
  other: ['elsewhere', 'other.txt', 'another folder outside 3b9d'],
  more: ['elsewhere', 'more.txt', 'more from that folder 81fe'],
};

/** Line `line` (1-based) of page `page` of the long PDF. */
export function longPdfLine(page, line) {
  return `Page ${page} line ${line}: the report continues with measured values and their notes.`;
}

/**
 * A PDF of `pages` pages in Helvetica, each holding `linesPerPage` lines of `lineText(page, line)`, written by
 * `pdfFile` (the e2e fixtures' PDF writer).
 */
export function makeTextPdf(pdfFile, pages, linesPerPage, lineText) {
  const objects = [];
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  const kids = [];
  for (let page = 1; page <= pages; page++) {
    const id = 2 + page * 2;
    const shown = [];
    for (let line = 1; line <= linesPerPage; line++) {
      shown.push(`(${lineText(page, line)}) Tj T*`);
    }
    const stream = `BT /F1 9 Tf 11 TL 40 760 Td ${shown.join(' ')} ET`;
    objects[id] =
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ' +
      `/Resources << /Font << /F1 3 0 R >> >> /Contents ${id + 1} 0 R >>`;
    objects[id + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
    kids.push(`${id} 0 R`);
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  return pdfFile(objects);
}

/** A notebook of `cells` code cells, each with one PNG plot output. */
export function makePlotsNotebook(cells, png) {
  const notebook = {
    cells: Array.from({ length: cells }, (_, i) => ({
      cell_type: 'code',
      id: `plot${i + 1}`,
      execution_count: i + 1,
      metadata: {},
      source: [`plot_series(${i + 1})`],
      outputs: [
        {
          output_type: 'display_data',
          metadata: {},
          data: { 'image/png': png.toString('base64'), 'text/plain': [`<Figure ${i + 1}>`] },
        },
      ],
    })),
    metadata: { language_info: { name: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
  return JSON.stringify(notebook, null, 1) + '\n';
}

/**
 * Writes every file under `base` and returns their paths. `shared` is the compiled extension/test/fixtures.js
 * (the e2e suites' fixtures and PNG and PDF writers).
 */
export function makeChatFixtures(base, sharedFixtures) {
  const shared = require(sharedFixtures);
  const fixtures = shared.makeFixtures(base);
  const write = (relative, content) => {
    const target = path.join(fixtures.workspace, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content);
    return target;
  };
  const bigText = Array.from({ length: BIG_TEXT_LINES }, (_, i) => shared.textLine(i + 1)).join('\n') + '\n';
  for (const [relative, content] of Object.entries(MANY_FILES)) {
    write(relative, content);
  }
  // The shared fixtures' .env holds SECRETS.env; a key file is the second sensitive file.
  write('deploy.key', `${SECRETS.key}\n`);
  const outsideFiles = {};
  for (const [name, [folder, file, text]] of Object.entries(OUTSIDE_FILES)) {
    fs.mkdirSync(path.join(base, folder), { recursive: true });
    outsideFiles[name] = path.join(base, folder, file);
    fs.writeFileSync(outsideFiles[name], `${text}\n`);
  }
  return {
    ...fixtures,
    outsideFiles,
    textLine: shared.textLine,
    textLines: shared.TEXT_LINES,
    bigText: write('big.txt', bigText),
    longPdf: write('long.pdf', makeTextPdf(shared.pdfFile, LONG_PDF_PAGES, LONG_PDF_LINES_PER_PAGE, longPdfLine)),
    plots: write('plots.ipynb', makePlotsNotebook(PLOT_CELLS, shared.makePng(64, 48))),
    /** A 160x120 PNG of about 40 KB, outside the workspace: what a test tool attaches as an image. */
    plotPng: (() => {
      const target = path.join(base, 'plot.png');
      fs.writeFileSync(target, shared.makePng(160, 120));
      return target;
    })(),
    /** The second workspace: the same large file, with the chat's writing of large results to disk turned off. */
    makeNoDiskWorkspace(settings) {
      const folder = path.join(base, 'workspace-no-disk');
      fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
      fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify(settings, null, 1));
      fs.writeFileSync(path.join(folder, 'big.txt'), bigText);
      fs.writeFileSync(path.join(folder, '.env'), `API_TOKEN=${SECRETS.env}\n`);
      return folder;
    },
  };
}
