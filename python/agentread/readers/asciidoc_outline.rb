# The headings of the AsciiDoc document on stdin, as Asciidoctor parses it, written to stdout as
# JSON: [[level, line, discrete], ...] in document order (level 0 is the document title, 1 a "=="
# section; discrete is 1 for a [discrete] heading, which opens no section).
#
# The text comes on stdin and in secure mode, so no include is read and no file beside the
# document is looked at (an include becomes a link). Exit status 3: the asciidoctor gem is missing.
begin
  require 'asciidoctor'
rescue LoadError
  exit 3
end
require 'json'

Asciidoctor::LoggerManager.logger = Asciidoctor::NullLogger.new  # warnings about the document are not ours to print
begin
  # UTF-8 whatever the locale (a C locale would take the bytes for ASCII).
  document = Asciidoctor.load($stdin.binmode.read.force_encoding(Encoding::UTF_8), safe: :secure, sourcemap: true)
  headings = document.find_by { |block| block.context == :section || block.context == :floating_title }
rescue SystemStackError
  $stderr.write 'it nests too deeply to parse'
  exit 4
end
$stdout.write JSON.generate(headings.map { |heading|
  [heading.level, heading.source_location.lineno, heading.context == :floating_title ? 1 : 0]
})
