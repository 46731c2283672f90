// The example browser of the eval and compare HTML reports: every example with its two images
// (embedded JPEG thumbnails, links, or none; a click enlarges one), both captions with the words
// that moved or changed marked, and for each run the two comparisons of the text score and of
// the image score with their numbers (a failed one marked), and the tags; a few lines of inline
// script search captions and ids, filter by tag, by any run's outcome and by one run right and
// another wrong (saying what to change when nothing matches) and sort by margin. No external
// resources.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>

// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>

#include "model/kernels/parallel.hpp"
#include "winokit/core/error.hpp"
#include "winokit/io/image_decode.hpp"
#include "winokit/io/image_store.hpp"
#include "winokit/io/png_writer.hpp"
#include "winokit/model/preprocess.hpp"
#include "winokit/report/csv_report.hpp"
#include "winokit/report/example_browser.hpp"
#include "winokit/report/format.hpp"
#include "winokit/report/html_report.hpp"
#include "winokit/report/json_report.hpp"
#include "winokit/report/markdown.hpp"

namespace winokit {

std::string browser_number(double v) {
  constexpr int kDecimals = 4;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", kDecimals, v);
  return std::string(buf) == "-0.0000" ? "0.0000" : buf;
}

std::string browser_signed_number(double v) {
  if (v == 0) return browser_number(0);
  constexpr double kSmallest = 0.00005;
  if (std::fabs(v) < kSmallest) return v > 0 ? "+&lt;0.0001" : "&minus;&lt;0.0001";
  return (v > 0 ? "+" : "&minus;") + browser_number(std::fabs(v));
}

namespace {

struct JpegWriteError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_write_fail(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegWriteError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Averages k x k blocks: a cheap first step before the bicubic resize of a large image.
DecodedImage box_reduce(const DecodedImage& im, int k) {
  DecodedImage out;
  out.width = im.width / k;
  out.height = im.height / k;
  out.mode = PixelMode::RGB;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * 3);
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      for (int c = 0; c < 3; ++c) {
        unsigned sum = 0;
        for (int dy = 0; dy < k; ++dy)
          for (int dx = 0; dx < k; ++dx)
            sum +=
                im.pixels[(static_cast<std::size_t>(y * k + dy) * im.width + (x * k + dx)) * 3 + c];
        out.pixels[(static_cast<std::size_t>(y) * out.width + x) * 3 + c] =
            static_cast<std::uint8_t>((sum + k * k / 2) / (k * k));
      }
    }
  }
  return out;
}

// A JPEG decoded straight at 1/2, 1/4 or 1/8 scale (libjpeg's DCT scaling), as large as still
// covers `max_side`: a thumbnail needs no full-size decode. Empty when the fast path does not
// apply (then the exact decoder runs and reports any problem).
std::optional<DecodedImage> decode_jpeg_scaled(const std::string& bytes, int max_side) {
  jpeg_decompress_struct cinfo{};
  JpegWriteError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_write_fail;
  err.mgr.emit_message = [](j_common_ptr, int) {};
  DecodedImage out;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return std::nullopt;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK ||
      cinfo.image_width == 0 || cinfo.image_height == 0) {
    jpeg_destroy_decompress(&cinfo);
    return std::nullopt;
  }
  const unsigned longer = std::max(cinfo.image_width, cinfo.image_height);
  unsigned denom = 1;
  while (denom < 8 && longer / (denom * 2) >= static_cast<unsigned>(max_side))
    denom *= 2;
  cinfo.scale_num = 1;
  cinfo.scale_denom = denom;
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.width = static_cast<int>(cinfo.output_width);
  out.height = static_cast<int>(cinfo.output_height);
  out.mode = PixelMode::RGB;
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row =
        out.pixels.data() + static_cast<std::size_t>(cinfo.output_scanline) * out.width * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return out;
}

std::string thumbnail_uri(const ImageBytes& bytes, int max_side) {
  std::optional<DecodedImage> fast;
  if (bytes.format == ImageFormat::Jpeg) fast = decode_jpeg_scaled(bytes.bytes, max_side);
  DecodedImage im = fast ? std::move(*fast) : to_rgb(decode_image(bytes));
  const int longer = std::max(im.width, im.height);
  if (longer > max_side) {
    const int k = longer / (2 * max_side);
    if (k >= 2) im = box_reduce(im, k);
    const double scale = static_cast<double>(max_side) / std::max(im.width, im.height);
    const int w = std::max(1, static_cast<int>(std::lround(im.width * scale)));
    const int h = std::max(1, static_cast<int>(std::lround(im.height * scale)));
    im = pil_resize(im, w, h);
  }
  return "data:image/jpeg;base64," + base64(encode_jpeg_rgb8(im.pixels, im.width, im.height, 70));
}

// Lowercased word without surrounding punctuation, for comparing the two captions.
std::string word_key(const std::string& word) {
  std::string k;
  for (char c : word)
    if (std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80))
      k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k.empty() ? word : k;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  std::string w;
  while (in >> w)
    words.push_back(w);
  return words;
}

}  // namespace

std::string thumbnail_data_uri(const ImageBytes& image, int max_side) {
  return thumbnail_uri(image, max_side);
}

std::array<std::string, 2> caption_diff_html(const std::string& a, const std::string& b) {
  // Words outside a longest common subsequence are the ones that moved or changed: marked. Of
  // several longest ones, the one whose words keep their place best wins ("a person holding up
  // books" / "books holding up a person": "holding up" stays, the swapped ends are marked): each
  // match weighs kMatch plus a bonus of up to kPlace for a similar relative position, and
  // kPlace * (longest caption) < kMatch, so a longer subsequence always beats a better-placed
  // shorter one.
  const auto wa = split_words(a), wb = split_words(b);
  const std::size_t n = wa.size(), m = wb.size();
  constexpr std::size_t kPlace = 100, kWordCap = 1000, kMatch = kPlace * kWordCap;
  auto bonus = [&](std::size_t i, std::size_t j) {
    const double pa = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
    const double pb = (static_cast<double>(j) + 0.5) / static_cast<double>(m);
    return static_cast<std::size_t>(
        std::lround(static_cast<double>(kPlace) * (1.0 - std::fabs(pa - pb))));
  };
  const bool weighted = std::max(n, m) < kWordCap;
  std::vector<std::vector<std::size_t>> lcs(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      lcs[i][j] =
          std::max({lcs[i + 1][j], lcs[i][j + 1],
                    word_key(wa[i]) == word_key(wb[j])
                        ? lcs[i + 1][j + 1] + (weighted ? kMatch + bonus(i, j) : std::size_t{1})
                        : std::size_t{0}});
  std::vector<bool> keep_a(n, false), keep_b(m, false);
  for (std::size_t i = 0, j = 0; i < n && j < m;) {
    if (word_key(wa[i]) == word_key(wb[j]) &&
        lcs[i][j] == lcs[i + 1][j + 1] + (weighted ? kMatch + bonus(i, j) : std::size_t{1})) {
      keep_a[i++] = true;
      keep_b[j++] = true;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  auto render = [](const std::vector<std::string>& words, const std::vector<bool>& keep) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (i) out += ' ';
      out += keep[i] ? html_escape(words[i]) : "<mark>" + html_escape(words[i]) + "</mark>";
    }
    return out;
  };
  return {render(wa, keep_a), render(wb, keep_b)};
}

HtmlImages parse_html_images(const std::string& text) {
  if (text == "embed") return HtmlImages::Embed;
  if (text == "link") return HtmlImages::Link;
  if (text == "none") return HtmlImages::None;
  throw UsageError("--html-images must be embed, link or none, not '" + text + "'");
}

std::vector<std::array<std::string, 2>> example_images(const WinogroundDataset& dataset,
                                                       HtmlImages mode,
                                                       const std::filesystem::path& report_dir,
                                                       int max_side) {
  std::vector<std::array<std::string, 2>> out(dataset.examples.size());
  if (mode == HtmlImages::None) return out;
  // A dataset without its images (scores evaluated from examples.jsonl alone) gets a report
  // without thumbnails, not an error; the browser says so.
  if (!std::filesystem::is_directory(dataset.root / "images") &&
      !std::filesystem::is_regular_file(dataset.root / "images.zip"))
    return out;
  ImageStore store = ImageStore::open(dataset.root, dataset.images);
  const std::filesystem::path base =
      std::filesystem::absolute(report_dir.empty() ? std::filesystem::path(".") : report_dir);
  const std::size_t count = dataset.examples.size() * 2;
  std::vector<std::string> errors(count);
  detail::parallel_for_dynamic(count, std::size_t{4}, [&](std::size_t k) {
    const WinogroundExample& ex = dataset.examples[k / 2];
    try {
      ImageBytes bytes = store.read(ex.images[k % 2]);
      if (mode == HtmlImages::Embed) {
        out[k / 2][k % 2] = thumbnail_uri(bytes, max_side);
      } else if (bytes.source.find(".zip:") != std::string::npos) {
        errors[k] = "--html-images link needs the images unpacked in an images/ folder; " +
                    bytes.source + " is inside a zip archive (use --html-images embed)";
      } else {
        auto rel = std::filesystem::absolute(bytes.source).lexically_relative(base);
        out[k / 2][k % 2] = rel.generic_string();
      }
    } catch (const std::exception& e) {
      errors[k] = e.what();
    }
  });
  for (const auto& e : errors)
    if (!e.empty()) throw InputError({dataset.root.string(), 0, ""}, e);
  return out;
}

namespace {

// Filters (search, tag, outcome of a chosen run, two runs against each other), sort by margin,
// the empty-result message, and the enlarged image. Text goes in through textContent only.
constexpr const char* kBrowserScript = R"(<script>
(function(){
var root=document.getElementById('examples');if(!root)return;
var list=root.querySelector('.ex-list'),items=[].slice.call(list.children);
function $(id){return root.querySelector('#'+id);}
var f={q:$('f-search'),tag:$('f-tag'),out:$('f-outcome'),run:$('f-run'),dis:$('f-model'),sort:$('f-sort')};
var count=$('ex-count'),empty=$('ex-empty'),why=$('ex-empty-why');
function run(){return f.run?+f.run.value:0;}
function outcomeOk(el,v){if(!v)return true;var m=run();
var o=+el.dataset.o.split(',')[m],t=o&1,i=o&2,g=o&4;
switch(v){case 'group':return !!g;case 'text-not-image':return t&&!i;
case 'image-not-text':return i&&!t;case 'neither':return !t&&!i;case 'not-group':return !g;
case 'text-wrong':return !t;case 'image-wrong':return !i;
case 'ties':return el.dataset.ties.split(',')[m]!=='0';}return true;}
function modelOk(el,v){if(!v)return true;var p=v.split(':'),o=el.dataset.o.split(',');
if(p[0]==='any'){var b=+p[1];var s=o.map(function(x){return +x&b?1:0});
return s.indexOf(1)>=0&&s.indexOf(0)>=0;}
var a=+p[0],c=+p[1],bit=+p[2];return !!(+o[a]&bit)&&!(+o[c]&bit);}
function searchOk(el,q){if(!q)return true;if(q===el.dataset.id.toLowerCase())return true;
var text=el.dataset.text;return q.split(/\s+/).every(function(w){return text.indexOf(w)>=0;});}
function label(s){return s.options[s.selectedIndex].text;}
function active(){var a=[];var q=f.q.value.trim();if(q)a.push('search \u201c'+q+'\u201d');
if(f.tag.value)a.push('tag \u201c'+label(f.tag)+'\u201d');
if(f.out.value)a.push('outcome \u201c'+label(f.out)+'\u201d'+(f.run?' of '+label(f.run):''));
if(f.dis&&f.dis.value)a.push('runs \u201c'+label(f.dis)+'\u201d');return a;}
function apply(){var tag=f.tag.value,q=f.q.value.trim().toLowerCase(),n=0;
items.forEach(function(el){var show=(!tag||('|'+el.dataset.tags+'|').indexOf('|'+tag+'|')>=0)&&
searchOk(el,q)&&outcomeOk(el,f.out.value)&&modelOk(el,f.dis?f.dis.value:'');el.hidden=!show;if(show)n++;});
var key=f.sort.value,sorted=items.slice();
if(key!=='id'){var m=run();sorted.sort(function(a,b){
var x=+a.dataset.margin.split(',')[m],y=+b.dataset.margin.split(',')[m];
return key==='margin-asc'?x-y:y-x;});}
sorted.forEach(function(el){list.appendChild(el);});
count.textContent=n+' of '+items.length+' examples shown';
if(n===0){var a=active();why.textContent='No example matches '+a.join(' and ')+'. '+
(a.length>1?'Change or clear one of these filters':'Change this filter')+', or show everything:';}
empty.hidden=n!==0;}
[f.tag,f.out,f.run,f.dis,f.sort].forEach(function(s){if(s)s.addEventListener('change',apply);});
f.q.addEventListener('input',apply);
$('f-clear').addEventListener('click',function(){f.q.value='';f.tag.value='';f.out.value='';
if(f.dis)f.dis.value='';apply();f.q.focus();});
function byId(id){return document.getElementById(id);}
var dlg=byId('zoom'),zimg=byId('zoom-img'),zcap=byId('zoom-cap'),opener=null;
if(dlg){root.addEventListener('click',function(e){var b=e.target.closest('button.zoom');if(!b)return;
var img=b.querySelector('img');zimg.src=img.src;zimg.alt=img.alt;
zcap.textContent=b.parentNode.querySelector('figcaption').textContent;opener=b;
if(dlg.showModal)dlg.showModal();else dlg.setAttribute('open','');});
function close(){if(dlg.close)dlg.close();else dlg.removeAttribute('open');}
byId('zoom-close').addEventListener('click',close);
dlg.addEventListener('click',function(e){if(e.target===dlg)close();});
dlg.addEventListener('close',function(){if(opener)opener.focus();});}
root.classList.add('js');apply();})();
</script>)";

// The smallest of the four comparisons' differences: positive exactly when the group score
// counts, its size how far the example is from flipping.
double margin(const WinogroundScores& s) {
  return std::min({s.at(0, 0) - s.at(1, 0), s.at(1, 1) - s.at(0, 1), s.at(0, 0) - s.at(0, 1),
                   s.at(1, 1) - s.at(1, 0)});
}

std::string mark(bool ok) {
  return ok ? "<span class=\"ok\">&#10003; right</span>"
            : "<span class=\"bad\">&#10007; wrong</span>";
}

std::string pair_name(int caption, int image) {
  return "s(c" + std::to_string(caption) + ", i" + std::to_string(image) + ")";
}

// One comparison the score needs: s(own) > s(other), with the actual relation, the two numbers,
// the difference and a mark; a failed one is its row's class "fail".
std::string inequality_row(const std::string& what, const WinogroundScores& s, int own_c, int own_i,
                           int other_c, int other_i) {
  const double a = s.at(own_c, own_i), b = s.at(other_c, other_i), d = a - b;
  const bool ok = d > 0;
  std::ostringstream r;
  r << "<tr class=\"" << (ok ? "pass" : "fail") << "\"><td class=\"m\">"
    << (ok ? "<span class=\"ok\" aria-label=\"holds\">&#10003;</span>"
           : "<span class=\"bad\" aria-label=\"fails\">&#10007;</span>")
    << "</td><th scope=\"row\">" << what << "</th><td>" << pair_name(own_c, own_i) << " "
    << browser_number(a) << "</td><td class=\"op\">"
    << (d > 0   ? "&gt;"
        : d < 0 ? "&lt;"
                : "=")
    << "</td><td>" << pair_name(other_c, other_i) << " " << browser_number(b)
    << "</td><td class=\"d\">" << (d == 0 ? "tie" : browser_signed_number(d)) << "</td></tr>";
  return r.str();
}

// The two comparisons of the text score and of the image score, for one run.
std::string comparisons_html(const std::string& model, const WinogroundScores& s,
                             const Outcome& o) {
  std::ostringstream h;
  h << "<div class=\"scroll\"><table class=\"ineq\"><caption>" << html_escape(model) << ": group "
    << mark(o.group) << "</caption>"
    << "<tr class=\"hd\"><th colspan=\"6\">Text score " << mark(o.text)
    << " <small>each image must score its own caption higher</small></th></tr>"
    << inequality_row("i0", s, 0, 0, 1, 0) << inequality_row("i1", s, 1, 1, 0, 1)
    << "<tr class=\"hd\"><th colspan=\"6\">Image score " << mark(o.image)
    << " <small>each caption must score its own image higher</small></th></tr>"
    << inequality_row("c0", s, 0, 0, 0, 1) << inequality_row("c1", s, 1, 1, 1, 0)
    << "</table></div><p class=\"outcome\">Margin " << browser_signed_number(margin(s))
    << " <small>(the smallest of the four differences; the group score needs all four "
       "positive)</small></p>";
  return h.str();
}

std::string lowercase(std::string text) {
  for (char& ch : text)
    if (!(ch & 0x80)) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

}  // namespace

std::string example_browser_html(const ExampleBrowser& b) {
  if (!b.dataset) return "";
  const WinogroundDataset& ds = *b.dataset;
  const std::size_t models = b.scores.size();
  std::ostringstream h;
  // Tag options: the dataset's tags and every extra tag set's tags.
  std::map<std::string, std::set<std::string>> tag_groups;
  auto tags_of = [&](std::size_t i) {
    const WinogroundExample& ex = ds.examples[i];
    std::vector<std::string> t;
    if (!ex.collapsed_tag.empty()) t.push_back("Collapsed: " + ex.collapsed_tag);
    if (!ex.tag.empty()) t.push_back("Tag: " + ex.tag);
    for (const auto& s : ex.secondary_tags)
      t.push_back("Secondary: " + s);
    if (ex.num_main_preds) t.push_back("Main predicates: " + std::to_string(*ex.num_main_preds));
    for (const auto& set : b.tag_sets) {
      if (i < set.tags.size() && set.tags[i]) {
        if (set.tags[i]->empty()) t.push_back(set.name + ": " + kNoTagGroup);
        for (const auto& tag : *set.tags[i])
          t.push_back(set.name + ": " + tag);
      }
    }
    return t;
  };
  std::vector<std::vector<std::string>> all_tags(ds.examples.size());
  for (std::size_t i = 0; i < ds.examples.size(); ++i) {
    all_tags[i] = tags_of(i);
    for (const auto& t : all_tags[i])
      tag_groups[t.substr(0, t.find(':'))].insert(t);
  }
  h << "<section id=\"examples\"><h2>Examples</h2><p class=\"note\">Every example with its two "
       "images and captions (marked: the words that moved or changed between the two captions) "
       "and, for each run, the four comparisons behind its scores. Text score: each image must "
       "score its own caption higher than the other caption. Image score: each caption must score "
       "its own image higher than the other image. Group score: all four. s(c, i) is the score of "
       "caption c with image i; a failed comparison is marked &#10007;, and a tie counts as "
       "wrong. Margin: the smallest of the four differences (positive exactly when the group "
       "score counts). Click an image to enlarge it. Search, filters and sorting need "
       "JavaScript; without it every example is listed in id order.</p>";
  h << "<div class=\"controls\" role=\"group\" aria-label=\"Search, filter and sort the "
       "examples\"><label>Search <input type=\"search\" id=\"f-search\" "
       "placeholder=\"caption word or id\" autocomplete=\"off\"></label>"
    << "<label>Tag <select id=\"f-tag\"><option value=\"\">all tags</option>";
  for (const auto& [group, tags] : tag_groups) {
    h << "<optgroup label=\"" << html_escape(group) << "\">";
    for (const auto& t : tags)
      h << "<option value=\"" << html_escape(t) << "\">" << html_escape(t.substr(t.find(':') + 2))
        << "</option>";
    h << "</optgroup>";
  }
  h << "</select></label>";
  h << "<label>Outcome <select id=\"f-outcome\"><option value=\"\">all outcomes</option>"
       "<option value=\"group\">group right</option>"
       "<option value=\"not-group\">group wrong</option>"
       "<option value=\"text-wrong\">text wrong</option>"
       "<option value=\"image-wrong\">image wrong</option>"
       "<option value=\"text-not-image\">text right, image wrong</option>"
       "<option value=\"image-not-text\">image right, text wrong</option>"
       "<option value=\"neither\">text and image wrong</option>"
       "<option value=\"ties\">with ties</option></select></label>";
  if (models > 1) {
    h << "<label>of run <select id=\"f-run\">";
    for (std::size_t m = 0; m < models; ++m)
      h << "<option value=\"" << m << "\">" << html_escape(b.models[m]) << "</option>";
    h << "</select></label>";
    h << "<label>Runs <select id=\"f-model\"><option value=\"\">all examples</option>"
         "<optgroup label=\"disagree\">";
    for (const auto& [bit, metric] : {std::pair{4, "group"}, {1, "text"}, {2, "image"}})
      h << "<option value=\"any:" << bit << "\">runs disagree on " << metric << "</option>";
    h << "</optgroup>";
    for (const auto& [bit, metric] : {std::pair{4, "group"}, {1, "text"}, {2, "image"}}) {
      h << "<optgroup label=\"" << metric << " score: one right, the other wrong\">";
      for (std::size_t a = 0; a < models; ++a)
        for (std::size_t c = 0; c < models; ++c)
          if (a != c)
            h << "<option value=\"" << a << ":" << c << ":" << bit << "\">"
              << html_escape(b.models[a]) << " " << metric << " right, " << html_escape(b.models[c])
              << " wrong</option>";
      h << "</optgroup>";
    }
    h << "</select></label>";
  }
  h << "<label>Sort <select id=\"f-sort\"><option value=\"id\">by id</option>"
       "<option value=\"margin-asc\">by margin, most wrong first</option>"
       "<option value=\"margin-desc\">by margin, most right first</option></select></label>"
       "<output id=\"ex-count\" aria-live=\"polite\">"
    << ds.examples.size() << " examples</output></div>";
  h << "<div id=\"ex-empty\" class=\"empty\" role=\"status\" hidden><span id=\"ex-empty-why\">"
       "</span> <button type=\"button\" id=\"f-clear\">Clear all filters</button></div>";
  const bool any_image = std::any_of(b.images.begin(), b.images.end(), [](const auto& pair) {
    return !pair[0].empty() || !pair[1].empty();
  });
  if (!any_image)
    h << "<p class=\"note\">No images shown: --html-images none, or the dataset folder has no "
         "images/ or images.zip.</p>";
  if (models > 1)
    h << "<p class=\"note\">The outcome filter and the margin sort use the run chosen in "
         "&ldquo;of run&rdquo;; &ldquo;Runs&rdquo; compares two runs.</p>";
  h << "<ol class=\"ex-list\">";
  for (std::size_t i : ds.id_order()) {
    const WinogroundExample& ex = ds.examples[i];
    std::string tags_attr, outcomes, ties, margins;
    for (const auto& t : all_tags[i])
      tags_attr += (tags_attr.empty() ? "" : "|") + t;
    std::vector<Outcome> oc(models);
    for (std::size_t m = 0; m < models; ++m) {
      oc[m] = judge(b.scores[m][i]);
      const char* sep = m ? "," : "";
      outcomes += sep + std::to_string(oc[m].bits());
      ties += sep + std::to_string(oc[m].text_ties + oc[m].image_ties);
      margins += sep + browser_number(margin(b.scores[m][i]));
    }
    h << "<li class=\"ex\" id=\"ex-" << html_escape(ex.id) << "\" data-id=\"" << html_escape(ex.id)
      << "\" data-text=\"" << html_escape(lowercase(ex.captions[0] + " / " + ex.captions[1]))
      << "\" data-tags=\"" << html_escape(tags_attr) << "\" data-o=\"" << outcomes
      << "\" data-ties=\"" << ties << "\" data-margin=\"" << margins << "\"><h3>Example "
      << html_escape(ex.id) << "</h3><div class=\"ex-body\"><div class=\"pair\">";
    const auto captions = caption_diff_html(ex.captions[0], ex.captions[1]);
    for (int k = 0; k < 2; ++k) {
      h << "<figure>";
      const std::string& src = i < b.images.size() ? b.images[i][k] : std::string();
      if (!src.empty())
        h << "<button type=\"button\" class=\"zoom\" aria-label=\"Enlarge image " << k
          << " of example " << html_escape(ex.id) << "\"><img src=\"" << html_escape(src)
          << "\" alt=\"image i" << k << " of example " << html_escape(ex.id)
          << "\" loading=\"lazy\"></button>";
      h << "<figcaption><b>i" << k << "</b>, its caption <b>c" << k << "</b>: <span class=\"cap\">"
        << captions[k] << "</span></figcaption></figure>";
    }
    h << "</div><div class=\"ex-scores\">";
    for (std::size_t m = 0; m < models; ++m) {
      const WinogroundScores& s = b.scores[m][i];
      h << comparisons_html(b.models[m], s, oc[m]);
    }
    h << "</div></div>";
    if (!all_tags[i].empty()) {
      h << "<p class=\"tags\">";
      for (const auto& t : all_tags[i])
        h << "<span>" << html_escape(t) << "</span> ";
      h << "</p>";
    }
    h << "</li>";
  }
  h << "</ol></section>";
  // The enlarged image, outside the list of examples (so "#examples img" are the thumbnails).
  if (any_image)
    h << "<dialog id=\"zoom\" aria-label=\"Enlarged image\"><figure><img id=\"zoom-img\" "
         "alt=\"\"><figcaption id=\"zoom-cap\"></figcaption></figure><button type=\"button\" "
         "id=\"zoom-close\">Close</button></dialog>";
  h << kBrowserScript;
  return h.str();
}

}  // namespace winokit
